import path from 'node:path';

/**
 * The files of a run's durable command (docs/run-lifecycle.md "Runner restarts"): the agent's process outlives the
 * runner, so its input, output and exit status go through files any later runner process on the same
 * `WORKSPACE_ROOT` reads, not through pipes that die with the runner. The directory is root's (the helper's), group
 * of the runner's account, so the runner reads them and the run's own uid never sees them.
 */
export const DURABLE_DIR = '.durable';

/** The exit status the helper writes for a keeper killed by a signal: `lost <signal>` (the sandbox went, not the agent). */
export const LOST_EXIT = 'lost';

export function durableFiles(workspaceRoot: string, runId: string) {
  const dir = path.join(workspaceRoot, DURABLE_DIR, runId);
  return {
    dir,
    /** The helper's record of the sandbox (uid, limits, socket directory, the keeper's pid): root's alone. */
    record: path.join(dir, 'record.json'),
    /** The command's stdin: a FIFO the runner writes; the keeper holds it open so a runner's exit is no EOF. */
    input: path.join(dir, 'in.fifo'),
    stdout: path.join(dir, 'out'),
    stderr: path.join(dir, 'err'),
    /** The command's exit status, written by the keeper when it ends (no process of the runner waits for it). */
    exit: path.join(dir, 'exit'),
  };
}
