import { z } from 'zod';

/**
 * The privileged helper's request API over the fork IPC channel (docs/sandbox.md). Narrow on purpose: the runner names
 * a run by its ID and an execution of a command by a number; every path and uid is derived by the helper from the run
 * ID and its own start-up settings, never taken from a message.
 */

const runId = z.string().uuid();
const execId = z.number().int().positive();
/** An environment snapshot: the team it belongs to and the hash of what made it (docs/snapshots.md). */
const snapshot = z.object({
  teamId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  key: z.string().regex(/^[0-9a-f]{64}$/),
});

export const helperRequestSchema = z.discriminatedUnion('op', [
  /**
   * Mounts (creating on first use) the run's filesystem and creates its cgroups; replies `{ uid, cgroups, snapshot? }`.
   * With `snapshot`, a fresh run starts from that snapshot when the store has it (`snapshot` in the reply: its ID).
   */
  z.object({
    op: z.literal('open'),
    runId,
    snapshot: snapshot.optional(),
    limits: z.object({
      diskBytes: z
        .number()
        .int()
        .min(1024 * 1024),
      memoryBytes: z.number().int().positive(),
      maxProcesses: z.number().int().positive(),
    }),
  }),
  /**
   * A stdio socket of an execution still to start (the socket itself travels as the message's handle): slot 0 is
   * stdin, 1 stdout, 2 stderr.
   */
  z.object({ op: z.literal('stdio'), execId, slot: z.union([z.literal(0), z.literal(1), z.literal(2)]) }),
  /** Starts a command in the run's sandbox as the run's uid with the stdio sockets sent before; replies `{ pid }`. */
  z.object({
    op: z.literal('exec'),
    runId,
    execId,
    argv: z.array(z.string()).min(1),
    env: z.record(z.string()),
    /** Working directory inside the sandbox. */
    cwd: z.string().startsWith('/'),
    /** TCP ports inside the sandbox forwarded to sockets of the run's socket directory. */
    forwarders: z.array(
      z.object({
        port: z.number().int().min(1).max(65535),
        socketName: z.string().regex(/^[a-z0-9-]+\.sock$/),
      }),
    ),
    /**
     * The run's agent: started under a keeper of its own with its stdio on files (no stdio sockets), so it outlives
     * the helper and the runner and a later runner process takes it back (`adopt`). One per run at a time.
     */
    durable: z.boolean().optional(),
    /** A durable command's input comes through the run's FIFO; without it, from /dev/null (a CLI reading stdin to
     * its end, as `codex exec` does, would otherwise wait on a FIFO the keeper holds open). */
    input: z.boolean().optional(),
  }),
  /** Takes back a run whose durable command outlived the previous runner process; replies `{ uid, cgroups, socketsDir }`. */
  z.object({ op: z.literal('adopt'), runId }),
  /** Releases what the previous runner process left and this one does not adopt; replies the released run IDs. */
  z.object({ op: z.literal('releaseLeftovers'), adopting: z.array(runId).max(1000) }),
  /** Ends the durable command's input, or signals it (as `signal` does an execution). */
  z.object({ op: z.literal('durable'), runId, action: z.enum(['end-input', 'SIGTERM', 'SIGKILL']) }),
  /** SIGTERM goes to the execution's processes inside the sandbox; SIGKILL to them and bwrap (the sandbox goes). */
  z.object({
    op: z.literal('signal'),
    runId,
    execId,
    signal: z.enum(['SIGTERM', 'SIGKILL']),
  }),
  /** The run's resource use: replies {@link RunStatus}. */
  z.object({ op: z.literal('status'), runId }),
  /** Kills what is left of the run, removes its cgroups and unmounts its filesystem, deleted unless `keep`. */
  z.object({ op: z.literal('release'), runId, keep: z.boolean() }),
  /** Deletes a kept, unmounted filesystem. */
  z.object({ op: z.literal('discard'), runId }),
  /** Keeps the run's workspace (no command running) as the snapshot `snapshot`; replies `{ snapshot?: id }`. */
  z.object({ op: z.literal('capture'), runId, snapshot }),
  /** Removes a snapshot (its environment's commit moved). */
  z.object({ op: z.literal('dropSnapshot'), snapshot }),
  /** Replies the store's {@link SnapshotStats}. */
  z.object({ op: z.literal('snapshotStats') }),
]);

export type HelperRequest = z.infer<typeof helperRequestSchema>;

export interface RunStatus {
  disk?: { usedBytes: number; full: boolean };
  /** Processes of the run's uid (counted only where no cgroup counts them). */
  processes?: number;
  oomKills: number;
  forksRefused: number;
}

/** What the helper sends: a reply to request `id`, or the end of an execution. */
export type HelperMessage =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string }
  | { exited: number; code: number | null; signal: NodeJS.Signals | null };

/** The helper's start-up settings, fixed by the runner while it is still root (JSON in argv[2]). */
export const helperSettingsSchema = z.object({
  workspaceRoot: z.string().startsWith('/'),
  stateDir: z.string().startsWith('/'),
  readOnlyPaths: z.array(z.string().startsWith('/')),
  bwrapPath: z.string().startsWith('/'),
  /** The runner's unprivileged account: owner of the state directory, where it listens on the runs' sockets. */
  runnerUid: z.number().int().nonnegative(),
  runnerGid: z.number().int().nonnegative(),
  /** Environment snapshots are evicted past this age (since last use) and this total size. */
  snapshots: z.object({ maxAgeMs: z.number().int().positive(), maxBytes: z.number().int().nonnegative() }),
});

export type HelperSettings = z.infer<typeof helperSettingsSchema>;
