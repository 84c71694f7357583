import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { collectBytes } from '../collect-output';
import { POD_CHECKPOINT, POD_WORKSPACE, type PodSnapshotVolume } from './kubernetes-objects';
import type { PodCommand } from './pod-snapshots';

/** The checkpoints' directory under the claim's root (beside the snapshot store's `.snapshots`). */
export const CHECKPOINTS_DIR = '.checkpoints';
/** The archive of a run's last turn in its directory (execution/turn-checkpoints.ts writes it). */
const ARCHIVE = 'workspace.tar';
/** A run ID as the orchestrator makes them: a path component of its own, never `.`, `..` or a separator. */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * Unpacks the mounted checkpoint into the new Pod's workspace, as the run's own user. Its members are `./…` (a `tar
 * -C workspace .`): `--strip-components=1` drops the `./` entry itself, whose mode the run's user may not set on the
 * emptyDir's root (`--no-overwrite-dir` did not stop that on the cluster: "tar: .: Cannot change mode"), and keeps the
 * rest where it was; `--no-same-owner` and `--no-same-permissions` keep every file the run's, without setuid bits; GNU
 * tar refuses members outside the directory.
 */
const UNPACK: [string, ...string[]] = [
  'tar',
  '--extract',
  `--file=${POD_CHECKPOINT}`,
  '--no-same-owner',
  '--no-same-permissions',
  '--strip-components=1',
  `--directory=${POD_WORKSPACE}`,
];

/**
 * Turn checkpoints on the Kubernetes backend (docs/sandbox.md "Container backend: Kubernetes"): kept on the claim every
 * runner replica mounts (SANDBOX_K8S_SNAPSHOT_CLAIM), one directory per run (mode 0700, the runner's), so whichever
 * replica goes on with a run whose Pod was lost finds its last turn. The new Pod mounts that run's archive alone,
 * read-only by sub-path — no run Pod ever mounts the directory or another run's — and unpacks it as the run's user.
 */
export class PodCheckpoints {
  constructor(
    /** The claim's root as mounted on the runner (WORKSPACE_ROOT). */
    private readonly root: string,
    private readonly claim: string,
  ) {}

  /** Where execution/turn-checkpoints.ts keeps the runs' checkpoints. */
  get dir(): string {
    return path.join(this.root, CHECKPOINTS_DIR);
  }

  /** The runs that have a checkpoint directory (names that are no run ID are not the runner's and are left). */
  async runs(): Promise<string[]> {
    const names = await readdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    return names.filter((name) => RUN_ID.test(name));
  }

  /** Deletes the run's checkpoint directory (the orphan reconciler, once the run has ended). */
  async remove(runId: string): Promise<void> {
    if (!RUN_ID.test(runId)) throw new Error(`malformed run ID for a checkpoint: ${JSON.stringify(runId)}`);
    await rm(path.join(this.dir, runId), { recursive: true, force: true });
  }

  /**
   * The volume of the run's own checkpoint for its new Pod, or undefined when it has none. The sub-path is made from
   * the run ID the runner was assigned, and each part of it must be what the runner wrote — a directory and a file,
   * no symbolic link — so no path reaches outside the run's own checkpoint.
   */
  async mount(runId: string): Promise<PodSnapshotVolume | undefined> {
    if (!RUN_ID.test(runId)) throw new Error(`malformed run ID for a checkpoint: ${JSON.stringify(runId)}`);
    const subPath = path.join(CHECKPOINTS_DIR, runId, ARCHIVE);
    let current = this.root;
    for (const [i, part] of subPath.split(path.sep).entries()) {
      current = path.join(current, part);
      const found = await lstat(current).catch(() => undefined);
      if (!found) return undefined;
      const last = i === 2;
      if (last ? !found.isFile() : !found.isDirectory())
        throw new Error(`the checkpoint path ${subPath} is not the runner's own (a link or a special file)`);
    }
    // Read by the run's uid through its mount only: the run's directory stays the runner's (0700).
    await chmod(current, 0o444);
    return { claim: this.claim, subPath };
  }

  /** Unpacks the mounted checkpoint into the workspace; throws with tar's own words when it does not unpack. */
  async restore(run: PodCommand): Promise<void> {
    const unpacked = await collectBytes(run(UNPACK, 'ignore'));
    if (unpacked.code !== 0)
      throw new Error(
        `unpacking the checkpoint failed: ${unpacked.stderr.trim() || `exit ${unpacked.code}`}`,
      );
  }
}
