import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import {
  chmod,
  chown,
  link,
  lstat,
  mkdir,
  readFile,
  readdir,
  rm,
  rmdir,
  statfs,
  truncate,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { idmappedMount } from './idmapped-mount';

const exec = promisify(execFile);
const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const EXT4_MAGIC = 0xef53;

/** Per-run uids come from this range: never a real account, never shared by two live runs in practice. */
export const UID_BASE = 1_000_000;
export const UID_SPAN = 1_000_000;
/** A run whose filesystem has less than this left has used its disk (a write of the next block would fail). */
const FULL_MARGIN_BYTES = 1024 * 1024;
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class RunDiskError extends Error {}

/** An environment snapshot a run starts from: a read-only ext4 image and the uid that owns its files. */
export interface LowerLayer {
  image: string;
  uid: number;
}

const run = async (file: string, args: string[]): Promise<void> => {
  try {
    await exec(file, args, { env: { PATH: HOST_PATH } });
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new RunDiskError(`${file} ${args[0] ?? ''}…: ${(stderr || message).trim()}`);
  }
};

/** Mount points under `root` (from /proc/self/mountinfo: field 5, spaces and the like octal-escaped). */
async function mountsUnder(root: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info
    .split('\n')
    .map((line) =>
      line.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))),
    )
    .filter((p): p is string => p !== undefined && path.dirname(p) === root);
}

export interface DiskUsage {
  usedBytes: number;
  /** Too little left for the run to write more: its disk limit is reached (blocks or inodes). */
  full: boolean;
}

/**
 * Each run's workspace is its own ext4 filesystem: a sparse image file of the run's disk size, loop-mounted
 * nosuid,nodev at `<root>/<runId>`. Its size bounds everything the run can store — an open unlinked file, sparse
 * files, hard links — and the host never walks the tree: usage is one statfs, release is an unmount and the deletion
 * of one file. The image and the run's uid live in `<root>/.images` (root only), so a kept workspace is re-mounted
 * with the same owner and needs no chown. Paths are derived here from the run ID alone.
 */
export class RunDisks {
  private readonly imagesDir: string;
  /** Root-only: a layered run's own disk, its snapshot's raw and idmapped mounts (`<runId>/{disk,raw,lower}`). */
  private readonly layersDir: string;

  constructor(private readonly root: string) {
    this.imagesDir = path.join(root, '.images');
    this.layersDir = path.join(root, '.layers');
  }

  /** Creates the root (traversable, not listable) and removes what a crashed predecessor left: mounts and images. */
  /** What a crash left goes, except the filesystems of `adoptable` runs, whose agents outlived the runner. */
  async init(adoptable: ReadonlySet<string> = new Set()): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o711 });
    await chmod(this.root, 0o711);
    for (const dir of [this.imagesDir, this.layersDir]) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
    }
    for (const mount of await mountsUnder(this.root)) {
      const runId = path.basename(mount);
      if (!RUN_ID.test(runId) || adoptable.has(runId.toLowerCase())) continue;
      await run('umount', ['-l', mount]);
      await rmdir(mount).catch(() => undefined);
    }
    for (const runId of await readdir(this.layersDir))
      if (!adoptable.has(runId)) await this.unmountLayers(runId);
    for (const file of await readdir(this.imagesDir))
      if (!adoptable.has(file.split('.')[0]!)) await rm(path.join(this.imagesDir, file), { force: true });
  }

  workspaceDir(runId: string): string {
    return path.join(this.root, checked(runId));
  }

  /**
   * Mounts the run's filesystem, creating it on first use with a new uid as the owner of its root (mode 0700: other
   * runs' uids cannot enter). Returns the run's uid, the same for every execution of the run.
   *
   * With `lower` (a fresh run started from an environment snapshot; docs/snapshots.md) the workspace is an overlayfs:
   * the snapshot read-only and idmapped to the run's uid below, the run's own filesystem above (so its disk limit
   * counts only its own writes). The run keeps a hard link to the snapshot's image: an eviction does not pull it away,
   * and a kept workspace is mounted again the same way.
   */
  async open(runId: string, diskBytes: number, lower?: LowerLayer): Promise<number> {
    const dir = this.workspaceDir(runId);
    const image = this.file(runId, 'img');
    let uid = await this.recordedUid(runId);
    const fresh = uid === undefined;
    if (uid === undefined) {
      if (lower) {
        await link(lower.image, this.file(runId, 'lower.img'));
        await writeFile(this.file(runId, 'lower.uid'), String(lower.uid), { mode: 0o600 });
      }
      uid = UID_BASE + randomInt(UID_SPAN);
      await writeFile(image, '', { mode: 0o600 });
      await truncate(image, diskBytes);
      // No journal (a workspace does not outlive a crash), no blocks reserved for root; the kernel is told not to
      // zero the inode tables in the background (noinit_itable below): the sparse file reads as zeros already.
      await run('mkfs.ext4', [
        '-q',
        '-F',
        '-m',
        '0',
        '-O',
        '^has_journal',
        '-E',
        `root_owner=${uid}:${uid},lazy_itable_init=1`,
        image,
      ]);
      await writeFile(this.file(runId, 'uid'), String(uid), { mode: 0o600 });
    }
    await mountPointAt(dir);
    const lowerUid = await this.recordedUid(runId, 'lower.uid');
    if (lowerUid === undefined) {
      await run('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noinit_itable', image, dir]);
      if (fresh) await prepareFresh(dir);
      return uid;
    }
    const layers = this.layers(runId);
    await mkdir(layers.base, { mode: 0o700 }).catch(() => undefined);
    for (const p of [layers.disk, layers.raw, layers.lower]) await mountPointAt(p);
    await run('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noinit_itable', image, layers.disk]);
    if (fresh) {
      // Made here, in a filesystem no run has seen (and a run never sees its top: only the overlay's upper dir).
      await prepareFresh(layers.disk);
      await mkdir(layers.upper, { mode: 0o700 });
      await chown(layers.upper, uid, uid);
      await mkdir(layers.work, { mode: 0o700 });
    }
    await run('mount', [
      '-t',
      'ext4',
      '-o',
      'loop,ro,nosuid,nodev',
      this.file(runId, 'lower.img'),
      layers.raw,
    ]);
    await idmappedMount(layers.raw, layers.lower, lowerUid, uid);
    await run('umount', [layers.raw]);
    await run('mount', [
      '-t',
      'overlay',
      '-o',
      `nosuid,nodev,lowerdir=${layers.lower},upperdir=${layers.upper},workdir=${layers.work}`,
      'overlay',
      dir,
    ]);
    return uid;
  }

  /** Whether the run has a filesystem already (a kept workspace): it is mounted again as it was. */
  async hasRecord(runId: string): Promise<boolean> {
    return (await this.recordedUid(runId)) !== undefined;
  }

  /** Whether the run's workspace is layered on a snapshot. */
  async layered(runId: string): Promise<boolean> {
    return (await this.recordedUid(runId, 'lower.uid')) !== undefined;
  }

  /** Where the run's own filesystem is mounted: the workspace itself, or under the overlay of a layered run. */
  async diskMount(runId: string): Promise<string> {
    return (await this.layered(runId)) ? this.layers(runId).disk : this.workspaceDir(runId);
  }

  imageOf(runId: string): string {
    return this.file(runId, 'img');
  }

  /** The run's filesystem usage by one statfs of its mount point; undefined when it is not mounted. */
  async usage(runId: string): Promise<DiskUsage | undefined> {
    const fs = await statfs(await this.diskMount(runId)).catch(() => undefined);
    if (!fs || fs.type !== EXT4_MAGIC) return undefined;
    return {
      usedBytes: (fs.blocks - fs.bfree) * fs.bsize,
      full: fs.bavail * fs.bsize < FULL_MARGIN_BYTES || fs.ffree === 0,
    };
  }

  /** Unmounts (lazily when something still holds it) and, unless kept for a debug session, deletes the image. */
  async release(runId: string, keep: boolean): Promise<void> {
    const dir = this.workspaceDir(runId);
    if ((await mountsUnder(this.root)).includes(dir)) {
      await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
    }
    await rmdir(dir).catch(() => undefined);
    await this.unmountLayers(checked(runId));
    if (!keep) await this.discard(runId);
  }

  /** Deletes a run's (unmounted) image and uid record, and its link to the snapshot it started from. */
  async discard(runId: string): Promise<void> {
    for (const ext of ['img', 'uid', 'lower.img', 'lower.uid'] as const)
      await rm(this.file(runId, ext), { force: true });
  }

  private async unmountLayers(runId: string): Promise<void> {
    if (!RUN_ID.test(runId)) return;
    const layers = this.layers(runId);
    const mounted = await mountsUnder(layers.base).catch((): string[] => []);
    for (const p of [layers.lower, layers.raw, layers.disk]) {
      if (mounted.includes(p)) await run('umount', [p]).catch(() => run('umount', ['-l', p]));
      await rmdir(p).catch(() => undefined);
    }
    await rmdir(layers.base).catch(() => undefined);
  }

  private layers(runId: string) {
    const base = path.join(this.layersDir, checked(runId));
    const disk = path.join(base, 'disk');
    return {
      base,
      disk,
      raw: path.join(base, 'raw'),
      lower: path.join(base, 'lower'),
      upper: path.join(disk, 'upper'),
      work: path.join(disk, 'work'),
    };
  }

  private file(runId: string, ext: 'img' | 'uid' | 'lower.img' | 'lower.uid'): string {
    return path.join(this.imagesDir, `${checked(runId)}.${ext}`);
  }

  private async recordedUid(runId: string, ext: 'uid' | 'lower.uid' = 'uid'): Promise<number | undefined> {
    const text = await readFile(this.file(runId, ext), 'utf8').catch(() => undefined);
    const uid = Number(text);
    return text !== undefined && Number.isInteger(uid) && uid >= UID_BASE && uid < UID_BASE + UID_SPAN
      ? uid
      : undefined;
  }
}

/** A root-owned empty directory to mount on (created when missing). */
async function mountPointAt(dir: string): Promise<void> {
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const mountPoint = await lstat(dir);
  if (!mountPoint.isDirectory() || mountPoint.uid !== 0)
    throw new RunDiskError(`${dir} is not root's directory`);
}

/** A filesystem no run has seen yet: its own lost+found is not the run's business. */
async function prepareFresh(mounted: string): Promise<void> {
  await rmdir(path.join(mounted, 'lost+found'));
  await chmod(mounted, 0o700);
}

function checked(runId: string): string {
  if (!RUN_ID.test(runId)) throw new RunDiskError(`not a run ID: ${JSON.stringify(runId)}`);
  return runId.toLowerCase();
}
