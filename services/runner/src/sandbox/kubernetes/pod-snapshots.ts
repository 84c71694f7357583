import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { collectBytes } from '../collect-output';
import type { SandboxProcess, SnapshotRef } from '../run-sandbox';
import type { PinnedSnapshot, SnapshotStats, SnapshotStore } from '../snapshot-store';
import { POD_SNAPSHOT, POD_UID, POD_WORKSPACE, type PodSnapshotVolume } from './kubernetes-objects';

/** Starts a command in the run's Pod, as the run's own user, with stdin from the caller when asked. */
export type PodCommand = (argv: [string, ...string[]], stdin: 'pipe' | 'ignore') => SandboxProcess;

/**
 * The workspace as an archive on stdout (run in the workspace): its entries, not `.` itself — the emptyDir's root is
 * not the run's, so a later Pod could not restore its mode and times. Owners as numbers (they are all the run's uid).
 */
const PACK: [string, ...string[]] = [
  '/bin/sh',
  '-c',
  'find . -mindepth 1 -maxdepth 1 -printf "%P\\0" | tar --create --file=- --numeric-owner --null --verbatim-files-from --files-from=-',
];
/**
 * Unpacks stdin into the workspace. Run by the new run's own user in its own Pod, so it can write nothing the run
 * could not; `--no-same-permissions` applies the umask and drops setuid/setgid bits, `--no-same-owner` keeps every
 * file the run's; GNU tar refuses members outside the directory and creates links out of it only after the files.
 */
const unpack = (file: string): [string, ...string[]] => [
  'tar',
  '--extract',
  `--file=${file}`,
  '--no-same-owner',
  '--no-same-permissions',
  `--directory=${POD_WORKSPACE}`,
];
/** Empties the workspace after an unpack that failed half-way: the run then sets up from scratch. */
const EMPTY: [string, ...string[]] = ['find', POD_WORKSPACE, '-mindepth', '1', '-delete'];

/** A team's snapshot pinned for one run's Pod, which mounts it read-only at POD_SNAPSHOT. */
export interface SnapshotMount {
  volume: PodSnapshotVolume;
  pinned: PinnedSnapshot;
  /** Removes the pin: once the Pod's container started, its mount holds the archive. */
  release(): Promise<void>;
}

/**
 * Environment snapshots on the Kubernetes backend (docs/snapshots.md): the runner keeps each team's snapshots as tar
 * archives in its store, and a new run's empty workspace is unpacked from one before anything else runs there. With
 * the store on a volume the run Pods can mount (`claim`, shared by the runner replicas), a Pod mounts its team's
 * archive read-only and unpacks it from the node's disk; without one, the runner streams it through the exec API. A
 * restore is a copy, not copy-on-write.
 */
export class PodSnapshots {
  constructor(
    private readonly store: SnapshotStore,
    /** The PersistentVolumeClaim the store lives on (SANDBOX_K8S_SNAPSHOT_CLAIM), when run Pods may mount it. */
    private readonly claim?: string,
  ) {}

  /**
   * Whether a run from `ref` should get a Pod of its own that mounts the archive: on a claim, an archive larger than
   * `streamMaxBytes`. A smaller one is streamed into a warm Pod (warm-pods.ts), which cannot get a new mount.
   */
  async mounts(ref: SnapshotRef, streamMaxBytes: number): Promise<boolean> {
    return this.claim !== undefined && (await this.store.bytes(ref)) > streamMaxBytes;
  }

  /**
   * The team's snapshot `ref` pinned for the Pod `pod` to mount, when the store is on a claim and has one: its
   * sub-path is made here from the run's own team and key, never from anything the run wrote.
   */
  async mount(ref: SnapshotRef, pod: string): Promise<SnapshotMount | undefined> {
    if (!this.claim) return undefined;
    const pinned = await this.store.pin(ref, pod);
    if (!pinned) return undefined;
    return {
      volume: { claim: this.claim, subPath: pinned.subPath },
      pinned,
      release: () => this.store.unpin(pinned),
    };
  }

  /**
   * Unpacks the team's snapshot `ref` into the Pod's workspace, if the store has one. A snapshot that does not
   * unpack is dropped (this run's setup makes a new one) and leaves the workspace emptied, reported as the failure:
   * the run sets up from scratch. A workspace that cannot even be emptied throws: no run starts on half a snapshot.
   */
  async restore(ref: SnapshotRef, run: PodCommand, mounted?: SnapshotMount): Promise<Restored> {
    if (mounted) {
      const unpacked = await collectBytes(run(unpack(POD_SNAPSHOT), 'ignore'));
      return this.restored(ref, run, mounted.pinned, unpacked, true);
    }
    const found = await this.store.find(ref);
    // Opened before the Pod is asked to unpack: a snapshot evicted meanwhile is a miss, and once open it stays whole.
    const file = found && (await open(found.image).catch(() => undefined));
    if (!found || !file) return {};
    const { size: bytes } = await file.stat();
    const proc = run(unpack('-'), 'pipe');
    // A command that ends (or never starts) before reading it all must not leave the copy waiting on its stdin.
    void proc.exited.then(() => proc.stdin!.destroy());
    const [unpacked, sent] = await Promise.all([
      collectBytes(proc),
      pipeline(file.createReadStream(), proc.stdin!).then(
        () => true,
        () => false,
      ),
    ]);
    return this.restored(ref, run, { id: found.id, bytes }, unpacked, sent);
  }

  /** A whole unpack is the run's start; any other drops the snapshot and empties the workspace (restore()). */
  private async restored(
    ref: SnapshotRef,
    run: PodCommand,
    found: { id: string; bytes: number },
    unpacked: { code: number | null; stderr: string },
    sent: boolean,
  ): Promise<Restored> {
    if (unpacked.code === 0 && sent) return { startedFrom: found.id, bytes: found.bytes };
    await this.store.drop(ref);
    const emptied = await collectBytes(run(EMPTY, 'ignore'));
    if (emptied.code !== 0)
      throw new Error(`the workspace could not be emptied after a failed restore: ${emptied.stderr.trim()}`);
    const why = sent
      ? unpacked.stderr.trim() || `exit ${unpacked.code}`
      : 'the archive did not reach the Pod';
    return { failure: `unpacking snapshot ${found.id} failed: ${why}` };
  }

  /**
   * Streams the Pod's workspace into the store as the snapshot `ref`; undefined when another run made it first. The
   * bytes come from the run's own image (its `tar`), so they are cut off at the store's size limit: a run cannot fill
   * the runner's volume through its snapshot.
   */
  capture(ref: SnapshotRef, run: PodCommand): Promise<string | undefined> {
    return this.store.capture(ref, POD_UID, async (target) => {
      const proc = run(PACK, 'ignore');
      let stderr = '';
      proc.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      const [exit] = await Promise.all([
        proc.exited,
        pipeline(proc.stdout, atMost(this.store.maxBytes), createWriteStream(target, { mode: 0o600 })).catch(
          async (err: unknown) => {
            await proc.kill();
            throw err;
          },
        ),
      ]);
      if (exit.code !== 0)
        throw new Error(`archiving the workspace failed (exit ${exit.code}): ${stderr.trim()}`);
    });
  }

  drop(ref: SnapshotRef): Promise<void> {
    return this.store.drop(ref);
  }

  init(): Promise<void> {
    return this.store.init();
  }

  stats(): Promise<SnapshotStats> {
    return this.store.stats();
  }
}

type Restored = { startedFrom?: string; failure?: string; bytes?: number };

/** Passes bytes through until more than `limit` came, then fails the pipeline. */
function atMost(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit)
        return done(new Error(`the workspace's archive passed the snapshot store's limit of ${limit} bytes`));
      done(null, chunk);
    },
  });
}
