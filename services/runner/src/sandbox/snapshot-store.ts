import { randomBytes } from 'node:crypto';
import {
  chmod,
  link,
  lstat,
  mkdir,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';

const TEAM = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[0-9a-f]{64}$/;
/** Who holds a pin: a run's Pod name. */
const HOLDER = /^[a-z0-9-]{1,63}$/;
/**
 * Temporary captures and pins older than this are what a stopped runner left behind. Younger ones may belong to
 * another replica sharing the store (a capture in progress, a Pod still starting), so they are left alone.
 */
const LEFTOVER_MS = 2 * 3600_000;

export interface SnapshotLimits {
  maxAgeMs: number;
  maxBytes: number;
}

export interface SnapshotRef {
  teamId: string;
  key: string;
}

/** A stored snapshot: its file (an ext4 image or a tar archive, by backend) and the uid that owns its files. */
export interface StoredSnapshot {
  id: string;
  image: string;
  uid: number;
}

/** A snapshot hard-linked for one holder (docs/snapshots.md, Kubernetes): `file` absolute, `subPath` under the root. */
export interface PinnedSnapshot {
  id: string;
  file: string;
  subPath: string;
  bytes: number;
}

export interface SnapshotStats {
  count: number;
  bytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

/** A snapshot's ID as the run's timeline shows it: the first 16 hex digits of its key. */
export const snapshotId = (key: string): string => key.slice(0, 16);

/**
 * Environment snapshots (docs/snapshots.md): one read-only file per snapshot holding a workspace right after its
 * environment's setup — an ext4 image (`img`, the bubblewrap backend) or a tar archive (`tar`, the Kubernetes
 * backend) — in a directory per team only its owner reads (`<root>/.snapshots/<team>/<key>.<format>`, the uid owning
 * its files beside it in `<key>.uid`). A file appears under its final name only complete (written to a temporary
 * name, renamed), so a half-written one is never used. Evicted by age and total size, least recently used first.
 */
export class SnapshotStore {
  private readonly dir: string;
  private readonly root: string;
  private readonly creating = new Set<string>();
  private readonly counters = { hits: 0, misses: 0, evictions: 0 };

  constructor(
    root: string,
    private readonly limits: SnapshotLimits,
    private readonly format: 'img' | 'tar' = 'img',
  ) {
    this.root = root;
    this.dir = path.join(root, '.snapshots');
  }

  /** The store's size limit: no single snapshot may be larger. */
  get maxBytes(): number {
    return this.limits.maxBytes;
  }

  /** Creates the store and removes the temporary files and pins a stopped runner left behind. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const now = Date.now();
    for (const team of await readdir(this.dir))
      for (const file of await readdir(path.join(this.dir, team)).catch(() => [])) {
        if (!file.startsWith('.tmp-') && !file.startsWith('.pin-')) continue;
        const leftover = path.join(this.dir, team, file);
        // ctime: a write or a new link moves it, so a capture or pin in use elsewhere looks young.
        const changed = (await lstat(leftover).catch(() => undefined))?.ctimeMs ?? now;
        if (now - changed > LEFTOVER_MS) await rm(leftover, { force: true });
      }
    await this.evict();
  }

  /** The team's snapshot for `key`, counted as a hit or a miss; its use keeps it from eviction by age the longest. */
  async find(ref: SnapshotRef): Promise<StoredSnapshot | undefined> {
    const { image, uidFile } = this.paths(ref);
    const uid = Number(await readFile(uidFile, 'utf8').catch(() => ''));
    // lstat: a link in the store is nobody's snapshot (it could name another team's).
    const found = uid > 0 && (await lstat(image).catch(() => undefined))?.isFile();
    if (!found) {
      this.counters.misses++;
      return undefined;
    }
    this.counters.hits++;
    const now = new Date();
    await utimes(uidFile, now, now).catch(() => undefined);
    return { id: snapshotId(ref.key), image, uid };
  }

  /** Size of the team's snapshot for `key` (0: none), not counted as a use: how a backend chooses to restore it. */
  async bytes(ref: SnapshotRef): Promise<number> {
    const found = await lstat(this.paths(ref).image).catch(() => undefined);
    return found?.isFile() ? found.size : 0;
  }

  /**
   * The team's snapshot for `key` hard-linked under a name of `holder`'s own, for a run's Pod to mount as a sub-path of
   * the store's volume: an eviction or a drop meanwhile leaves the link whole, and a Pod never names a path the runner
   * did not make. Counted like find(); `unpin` removes the link once the Pod has it mounted.
   */
  async pin(ref: SnapshotRef, holder: string): Promise<PinnedSnapshot | undefined> {
    if (!HOLDER.test(holder)) throw new Error('malformed snapshot holder');
    const found = await this.find(ref);
    if (!found) return undefined;
    const file = path.join(this.paths(ref).teamDir, `.pin-${holder}.${this.format}`);
    const linked = await link(found.image, file).then(
      () => true,
      () => false,
    );
    if (!linked) return undefined;
    const { size } = await stat(file);
    return { id: found.id, file, subPath: path.relative(this.root, file), bytes: size };
  }

  async unpin(pinned: PinnedSnapshot): Promise<void> {
    await rm(pinned.file, { force: true });
  }

  /**
   * Writes a run's workspace into the store as the snapshot for `key` (`copyFrom` writes the file: a frozen image, an
   * archive streamed from the run's Pod). Returns its ID, or
   * undefined when one exists or another run is making it (that run's copy wins; nobody waits for it).
   */
  async capture(
    ref: SnapshotRef,
    uid: number,
    copyFrom: (target: string) => Promise<void>,
  ): Promise<string | undefined> {
    const { teamDir, image, uidFile } = this.paths(ref);
    const name = `${ref.teamId}/${ref.key}`;
    // Claimed before the first await: two captures of one key at once must not both pass the check.
    if (this.creating.has(name)) return undefined;
    this.creating.add(name);
    const tmp = path.join(teamDir, `.tmp-${ref.key}-${randomBytes(4).toString('hex')}`);
    try {
      if (await stat(image).catch(() => undefined)) return undefined;
      await mkdir(teamDir, { recursive: true, mode: 0o700 });
      await copyFrom(tmp);
      // Archives are read by the run Pods that mount them (as another uid); the team's directory stays the runner's.
      await chmod(tmp, this.format === 'tar' ? 0o444 : 0o400);
      await writeFile(uidFile, String(uid), { mode: 0o600 });
      await rename(tmp, image);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    } finally {
      this.creating.delete(name);
    }
    await this.evict();
    return snapshotId(ref.key);
  }

  /** Removes the team's snapshot for `key` (its environment's commit moved: the next run makes a new one). */
  async drop(ref: SnapshotRef): Promise<void> {
    const { image, uidFile } = this.paths(ref);
    await rm(image, { force: true });
    await rm(uidFile, { force: true });
  }

  /**
   * Drops snapshots older than the age limit (since last use), then the least recently used until the store fits the
   * size limit. A run using a dropped snapshot keeps its own link to the image until it ends.
   */
  async evict(): Promise<void> {
    const entries = await this.entries();
    const now = Date.now();
    let total = entries.reduce((sum, e) => sum + e.bytes, 0);
    for (const entry of entries.sort((a, b) => a.usedAt - b.usedAt)) {
      if (now - entry.usedAt <= this.limits.maxAgeMs && total <= this.limits.maxBytes) continue;
      await this.drop(entry.ref);
      total -= entry.bytes;
      this.counters.evictions++;
    }
  }

  async stats(): Promise<SnapshotStats> {
    const entries = await this.entries();
    return { count: entries.length, bytes: entries.reduce((s, e) => s + e.bytes, 0), ...this.counters };
  }

  private async entries(): Promise<Array<{ ref: SnapshotRef; bytes: number; usedAt: number }>> {
    const found: Array<{ ref: SnapshotRef; bytes: number; usedAt: number }> = [];
    for (const teamId of await readdir(this.dir)) {
      if (!TEAM.test(teamId)) continue;
      for (const file of await readdir(path.join(this.dir, teamId)).catch(() => [])) {
        const key = file.slice(0, -`.${this.format}`.length);
        if (!KEY.test(key) || !file.endsWith(`.${this.format}`)) continue;
        const { image, uidFile } = this.paths({ teamId, key });
        const [img, used] = await Promise.all([stat(image), stat(uidFile)]).catch(() => []);
        // Sparse images: what they hold on the host's disk, not their nominal size.
        if (img && used) found.push({ ref: { teamId, key }, bytes: img.blocks * 512, usedAt: used.mtimeMs });
      }
    }
    return found;
  }

  private paths(ref: SnapshotRef): { teamDir: string; image: string; uidFile: string } {
    if (!TEAM.test(ref.teamId) || !KEY.test(ref.key)) throw new Error('malformed snapshot reference');
    const teamDir = path.join(this.dir, ref.teamId);
    return {
      teamDir,
      image: path.join(teamDir, `${ref.key}.${this.format}`),
      uidFile: path.join(teamDir, `${ref.key}.uid`),
    };
  }
}
