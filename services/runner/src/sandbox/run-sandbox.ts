import type { EndpointRoute } from './route-forwarder';
import type { Readable, Writable } from 'node:stream';
import type { SandboxLimitName } from '@conveyor/run-events';

/**
 * Run isolation, the same contract on every backend (docs/sandbox.md). The backend owns the run's workspace: it
 * creates it with the sandbox and deletes it with it; what goes in it is written from inside. Everything a run executes — environment
 * setup, the harness, the agent's own tool calls, git operations on the workspace, the debug session — goes through
 * `RunSandbox.exec`. Nothing of the runner's own environment leaks in: the caller passes the whole allow-listed
 * environment. A backend that cannot start a sandbox throws `SandboxUnavailable`; the run is refused, never run bare.
 */

export interface SandboxLimits {
  /** Wall-clock budget of the whole run; the sandbox kills everything when it runs out. */
  wallClockMs: number;
  /** Processes (tasks) the run may have at once. */
  maxProcesses: number;
  /** Memory of the run's processes together. */
  memoryBytes: number;
  /** Bytes the workspace may hold (every byte: the local backend gives each run a filesystem of this size). */
  diskBytes: number;
  /** The run-wide limit that ended the sandbox, when one did (the run then ends with it, whatever the harness said). */
  limit?: SandboxLimitHit;
}

/** A platform-side service made reachable from inside one run's sandbox only (the model proxy, harness support). */
export interface SandboxEndpoint {
  /** Name by which `RunSandbox.endpointUrl` returns its URL as seen from inside. */
  name: string;
  /** Where it listens on the platform's side. */
  target: { host: string; port: number };
  /** An HTTP endpoint of which the run may call these routes alone (others: 403); absent, a plain TCP pipe. */
  routes?: readonly EndpointRoute[];
}

/**
 * Set on every request to a policy endpoint by the Kubernetes backend's run gateway (over whatever the agent sent) to
 * the run whose key the request came with: an endpoint that knows runs by their own credential (the model proxy)
 * refuses one of another run, so one run's key cannot carry another run's credential.
 */
export const RUN_ID_HEADER = 'x-conveyor-run-id';

export interface SandboxPolicy {
  runId: string;
  /**
   * The run's execution the sandbox serves: a backend whose sandboxes outlive the runner labels them with it, so an
   * adopter takes the one of the execution it adopts and a later execution's start collects an earlier one's.
   */
  execution?: number;
  /** The environment's `docker_image`: honoured by container backends; the local backend runs the host's tool chain. */
  image?: string;
  /** Hosts the run may reach through the egress filter: exact names or `*.example.com`. */
  allowedHosts: string[];
  endpoints: SandboxEndpoint[];
  limits: SandboxLimits;
  /** Start from this environment snapshot when the backend has it (docs/snapshots.md). */
  snapshot?: SnapshotRef;
  /**
   * The run goes on from its last turn's checkpoint after its agent was lost (docs/run-lifecycle.md "Lost agents"): a
   * backend that keeps checkpoints where the new sandbox can mount them does so (`RunSandbox.restoreCheckpoint`).
   */
  resumeFromCheckpoint?: boolean;
  /** `reopen` only: the sandbox's `reopenSecret` as the runner that made it recorded it. */
  reopenSecret?: string;
  /** Told of every destination the run asks the egress filter for, so denials can go on the run's timeline. */
  onEgress?: (attempt: { host: string; port: number; allowed: boolean; reason?: string }) => void;
  /** Told why the sandbox is not ready yet when it waits on something outside the runner (a Pod no node can take). */
  onWaiting?: (why: string) => void;
}

export interface SandboxExecOptions {
  argv: [string, ...string[]];
  /** Working directory inside the sandbox; defaults to the workspace. */
  cwd?: string;
  /** The process's whole environment (the backend adds only what the policy needs, e.g. proxy variables). */
  env: Record<string, string>;
  stdin?: 'pipe' | 'ignore';
  /**
   * `false`: the command reaches nothing, not even the egress filter or the policy's endpoints (the runner's own file
   * work in the workspace: laying it out, HOME files, the patch). Where a backend starts a forwarder per command (the
   * local one), this saves starting it. Default: the policy's network.
   */
  network?: boolean;
  /**
   * The run's agent: where the backend can, the process outlives the runner process (its output goes through files,
   * its exit status is recorded apart from it) and a later runner process takes it back with `attachDurable`
   * (docs/run-lifecycle.md "Runner restarts"). Backends that cannot ignore it.
   */
  durable?: boolean;
}

/** How far a runner has read a durable process's output (bytes of whole lines). */
export interface OutputOffsets {
  stdout: number;
  stderr: number;
}

/** Why a process ended when a limit, not the process itself, ended it. */
export type SandboxLimitHit = SandboxLimitName;

export interface SandboxExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  limit?: SandboxLimitHit;
  /**
   * Set when the process ended because its sandbox went away around it (its keeper or Pod killed, the host lost),
   * not by its own doing: why, for the run's timeline. The run resumes from its last turn (docs/run-lifecycle.md).
   */
  lost?: string;
}

export interface SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the process and every descendant are gone. */
  readonly exited: Promise<SandboxExit>;
  /**
   * Ends the whole process tree: SIGTERM, then SIGKILL after `graceMs`. Resolves once it is gone and never rejects
   * (callers fire it from abort handlers and timers), so every backend catches its own failures.
   */
  kill(graceMs?: number): Promise<void>;
  /** A durable process's output read so far: where a later runner process goes on reading. Only durable ones have it. */
  readonly offsets?: OutputOffsets;
}

export interface SandboxUsage {
  /** Bytes the workspace held when the sandbox was destroyed (reported on the run's timeline). */
  diskBytes: number;
  /** The run-wide limit that ended the sandbox, when one did (the run then ends with it, whatever the harness said). */
  limit?: SandboxLimitHit;
  /**
   * Why the sandbox itself went while the run was in it (on Kubernetes: its Pod deleted or evicted): the run then ends
   * ERROR with this message, whatever the harness said.
   */
  lost?: string;
}

/** An environment snapshot: its team and the hash of the environment's configuration (execution/environment-snapshots.ts). */
export interface SnapshotRef {
  teamId: string;
  key: string;
}

export interface RunSandbox {
  /** The workspace's path as seen by processes inside the sandbox. */
  readonly workspaceDir: string;
  /** The ID of the environment snapshot the workspace started from, if it did. */
  readonly startedFrom?: string;
  /** Why the policy's snapshot could not be used (the workspace then started empty). */
  readonly snapshotFailure?: string;
  /** Whether this sandbox's backend keeps environment snapshots at all (captureSnapshot can make one). */
  readonly keepsSnapshots?: boolean;
  /**
   * Unpacks the run's checkpoint, which the backend mounted into this sandbox (`SandboxPolicy.resumeFromCheckpoint`);
   * absent, the runner streams the checkpoint in.
   */
  readonly restoreCheckpoint?: () => Promise<void>;
  /**
   * Keeps the workspace as it is now (no command running) as the snapshot `ref`; returns its ID, or undefined when
   * another run made it first. Only backends that keep snapshots have it.
   */
  captureSnapshot?(ref: SnapshotRef): Promise<string | undefined>;
  /** Removes the snapshot `ref` (the workspace started from it and found its repositories moved on). */
  dropSnapshot?(ref: SnapshotRef): Promise<void>;
  /**
   * Credentials the sandbox itself hands the run's processes (on Kubernetes, the run's gateway key, in its proxy and
   * endpoint URLs): kept out of the run's events and transcript like the run's other secrets, since another run
   * holding the key could use this run's grants while it lives.
   */
  readonly secrets?: readonly string[];
  /**
   * What only this runner knows of the sandbox and another needs to reopen it (Kubernetes: the run's gateway key, which
   * its agent presents): kept in the adoption record, which the orchestrator seals at rest. Never logged.
   */
  readonly reopenSecret?: string;
  /** URL (scheme, host and port, no trailing slash) of a policy endpoint as seen from inside the sandbox. */
  endpointUrl(name: string): string;
  exec(options: SandboxExecOptions): SandboxProcess;
  /** The run's durable process a previous runner process started, read on from `from`. Backends with durable ones. */
  attachDurable?(from: OutputOffsets): SandboxProcess;
  /**
   * Lets go of the run and kills nothing: its durable process goes on for whoever takes the run, and what waits for
   * it here ends with `RunDetached`. `takenOver`: another runner took the run over while this one lives, so nothing
   * of it is served from here any more (Kubernetes: its gateway registration is dropped locally). Backends with
   * durable processes.
   */
  detach?(takenOver?: boolean): void;
  /**
   * Kills what still runs and releases the sandbox and its workspace, which is deleted unless `keepWorkspace` (a failed
   * setup keeps it for the debug session, which prepares the same run's sandbox again) — never when a limit ended
   * the run: no debug session follows one. Idempotent.
   */
  destroy(options?: { keepWorkspace?: boolean }): Promise<SandboxUsage>;
}

export interface SandboxBackend {
  readonly name: string;
  /** Verifies at start-up that this backend can isolate runs here; throws `SandboxUnavailable` when it cannot. */
  check(): Promise<void>;
  /** Creates (or, for a kept workspace, reopens) the run's workspace and its sandbox. */
  prepare(policy: SandboxPolicy): Promise<RunSandbox>;
  /**
   * Takes back a run's sandbox whose durable process outlived the previous runner process (same workspace root);
   * throws `SandboxUnavailable` naming why it cannot. Backends with durable processes only.
   */
  reopen?(policy: SandboxPolicy): Promise<RunSandbox>;
  /**
   * Ends the runs the previous runner process left that this one will not reopen (no record of them here, or they
   * ended meanwhile); returns their IDs. Called once at start, before any `reopen`.
   */
  releaseLeftovers?(adopting: string[]): Promise<string[]>;
  /**
   * The runner stops without ending its runs: its durable processes go on alone, and what waits for them here ends
   * with `RunDetached`; they are left for the next runner process.
   */
  detach?(): void;
  /** Deletes a workspace kept for a debug session that never came. */
  discardWorkspace(runId: string): Promise<void>;
  /**
   * Where the backend keeps each run's last turn, when it must be somewhere other than the runner's own state
   * directory (Kubernetes: on the claim every replica shares, so any of them can resume the run).
   */
  readonly checkpointDir?: string;
  /** Environment snapshots, where the backend keeps them: what the store holds, for `/metrics`. */
  readonly snapshots?: {
    stats(): Promise<{ count: number; bytes: number; hits: number; misses: number; evictions: number }>;
  };
  /** Warm run Pods, where the backend keeps them: per image, for `/metrics`; stopped (unclaimed ones deleted) at shutdown. */
  readonly warmPods?: {
    stats(): Array<{ image: string; ready: number; starting: number; hits: number; misses: number }>;
    stop(): Promise<void>;
  };
}

/** The sandbox could not be set up: the run is refused (error code `resource_unavailable`), never run bare. */
export class SandboxUnavailable extends Error {}

/** The agent's sandbox went away while the agent ran (`SandboxExit.lost`): the run resumes from its last turn. */
export class SandboxLost extends Error {}

/** The runner is stopping and left the run's durable process to its next process: nothing of the run ends here. */
export class RunDetached extends Error {
  constructor() {
    super('the runner left the run to its next process');
  }
}
