import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { chmod, readdir, rm } from 'node:fs/promises';
import type net from 'node:net';
import path from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import type { Logger } from '@conveyor/logger';
import {
  SANDBOX_ENDPOINT_BASE_PORT,
  SANDBOX_PROXY_PORT,
  SANDBOX_WORKSPACE,
  type Forwarder,
} from './bwrap-args';
import { EgressProxy, reportEgress } from '../egress-proxy';
import { proxyEnvironment } from '../run-environment';
import type { PrivilegedHelper } from './privileged/helper-client';
import {
  SandboxUnavailable,
  type RunSandbox,
  type SandboxBackend,
  type SandboxExecOptions,
  type SandboxExit,
  type SandboxLimitHit,
  type SandboxPolicy,
  type SandboxProcess,
  type SandboxUsage,
  type SnapshotRef,
  type OutputOffsets,
} from '../run-sandbox';
import { SocketBridge } from '../socket-bridge';
import { SocketPairs } from './socket-pairs';
import { durableFiles } from './durable-files';
import { DurableProcess } from './durable-process';

export interface BwrapBackendOptions {
  /** The privileged helper that mounts, confines, starts and releases runs (the runner itself is unprivileged). */
  helper: PrivilegedHelper;
  /** Host paths visible read-only inside every sandbox besides /usr (given to the helper too; checked here). */
  readOnlyPaths: string[];
  /** `host:port` pairs on private networks runs may reach through the egress proxy (SANDBOX_INTERNAL_HOSTS). */
  internalHosts: string[];
  /** Host directory of the per-run socket directories (the runner's own; the helper creates each run's). */
  stateDir: string;
  /** Parent directory of the runs' workspaces (each the mount point of the run's own filesystem). */
  workspaceRoot: string;
  /** How often the disk use of the workspace and the process count are checked. */
  monitorIntervalMs: number;
  logger: Logger;
}

/**
 * bwrap runs as the run's uid, so it must be able to walk to every directory it binds: each ancestor needs the
 * execute bit for others (a clone under /root, mode 0700, is the usual culprit). Refuse clearly rather than fail later.
 */
function assertTraversable(target: string): void {
  for (let dir = path.dirname(path.resolve(target)); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new SandboxUnavailable(
        `${dir} is not traversable by other users (chmod o+x), so a sandbox cannot reach ${target}`,
      );
    }
    if (dir === '/') return;
  }
}

/**
 * The local backend (docs/sandbox.md): bubblewrap with every namespace unshared, each run under its own unprivileged
 * uid on its own filesystem, memory and processes in a cgroup where the host lets us create one, network only through
 * socat forwarders to the runner's egress proxy and the policy's endpoints. What needs root (mounting, cgroups,
 * starting as the run's uid, signalling, releasing) is the privileged helper's; this side holds the run's sockets.
 */
export class BwrapBackend implements SandboxBackend {
  readonly name = 'bubblewrap';
  /** Whether runs' memory and processes are held by cgroups here (else by rlimits alone; docs/sandbox.md). */
  usesCgroups = false;
  private stdio: SocketPairs | undefined;
  readonly snapshots: NonNullable<SandboxBackend['snapshots']>;
  /** The runs' sandboxes here now, whose durable processes `detach` leaves to the next runner process. */
  private readonly sandboxes = new Set<BwrapSandbox>();

  constructor(private readonly options: BwrapBackendOptions) {
    this.snapshots = { stats: () => options.helper.snapshotStats() };
  }

  discardWorkspace(runId: string): Promise<void> {
    return this.options.helper.discard(runId);
  }

  async check(): Promise<void> {
    for (const p of [this.options.stateDir, this.options.workspaceRoot, ...this.options.readOnlyPaths])
      assertTraversable(path.join(p, 'x'));
    this.stdio = await SocketPairs.listen(path.join(this.options.stateDir, `stdio-${process.pid}.sock`));
    const sandbox = await this.prepare({
      runId: randomUUID(),
      allowedHosts: [],
      endpoints: [],
      limits: {
        wallClockMs: 30_000,
        maxProcesses: 64,
        memoryBytes: 256 * 1024 * 1024,
        diskBytes: 16 * 1024 * 1024,
      },
    });
    // Not root, and the seccomp filter in force (mode 2).
    const probe = sandbox.exec({
      argv: [
        '/bin/sh',
        '-c',
        'test "$(id -u)" != 0 && grep -q "^Seccomp:[[:space:]]*2" /proc/self/status && touch probe',
      ],
      env: {},
    });
    let stderr = '';
    probe.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    probe.stdout.resume();
    const exit = await probe.exited;
    await sandbox.destroy();
    if (exit.code !== 0)
      throw new SandboxUnavailable(
        `bubblewrap cannot start a sandbox here (exit ${exit.code}): ${stderr.trim()}`,
      );
    this.options.logger.info(
      { cgroups: this.usesCgroups },
      this.usesCgroups
        ? 'local sandbox ready: bubblewrap, per-run uid and filesystem, memory and pids cgroups'
        : 'local sandbox ready: bubblewrap, per-run uid and filesystem; no writable cgroups here: memory capped per process (RLIMIT_DATA), processes by RLIMIT_NPROC',
    );
  }

  async prepare(policy: SandboxPolicy): Promise<RunSandbox> {
    let opened: Awaited<ReturnType<PrivilegedHelper['open']>>;
    try {
      opened = await this.options.helper.open(policy.runId, policy.limits, policy.snapshot);
    } catch (err) {
      throw new SandboxUnavailable((err as Error).message);
    }
    const sandbox = await this.serve(policy, opened);
    sandbox.startedFrom = opened.snapshot;
    sandbox.snapshotFailure = opened.snapshotFailure;
    return sandbox;
  }

  /**
   * The sandbox of a run whose agent outlived the previous runner process: the helper takes it back, and the egress
   * filter and the endpoints listen again on the same sockets, where the sandbox's forwarders connect.
   */
  async reopen(policy: SandboxPolicy): Promise<RunSandbox> {
    let opened: Awaited<ReturnType<PrivilegedHelper['adopt']>>;
    try {
      opened = await this.options.helper.adopt(policy.runId);
    } catch (err) {
      throw new SandboxUnavailable((err as Error).message);
    }
    // The run's wall clock goes on from when its sandbox was first opened, not from this process's start.
    return this.serve(policy, opened, Date.now() - opened.openedAt);
  }

  releaseLeftovers(adopting: string[]): Promise<string[]> {
    return this.options.helper.releaseLeftovers(adopting);
  }

  detach(): void {
    for (const sandbox of this.sandboxes) sandbox.detach();
  }

  /** Serves the run's egress filter and endpoints on sockets of its directory; the sandbox gets them bridged in. */
  private async serve(
    policy: SandboxPolicy,
    opened: { cgroups: boolean; socketsDir: string },
    elapsedMs = 0,
  ): Promise<BwrapSandbox> {
    const { helper } = this.options;
    if (!this.stdio) throw new SandboxUnavailable('the sandbox backend was not checked');
    const { socketsDir } = opened;
    this.usesCgroups = opened.cgroups;
    const closers: Array<() => Promise<void>> = [
      // The sockets are this process's; the helper removes the (then empty) directory on release.
      async () => {
        for (const name of await readdir(socketsDir)) await rm(path.join(socketsDir, name), { force: true });
      },
    ];
    try {
      const proxy = await EgressProxy.listen(
        path.join(socketsDir, 'egress.sock'),
        { allowedHosts: policy.allowedHosts, internalHosts: this.options.internalHosts },
        reportEgress(policy, this.options.logger.child({ runId: policy.runId })),
      );
      closers.push(() => proxy.close());
      const forwarders: Forwarder[] = [{ port: SANDBOX_PROXY_PORT, socketName: 'egress.sock' }];
      const endpointPorts = new Map<string, number>();
      for (const [i, endpoint] of policy.endpoints.entries()) {
        const socketName = `endpoint-${i}.sock`;
        const bridge = await SocketBridge.listen(path.join(socketsDir, socketName), endpoint);
        closers.push(() => bridge.close());
        forwarders.push({ port: SANDBOX_ENDPOINT_BASE_PORT + i, socketName });
        endpointPorts.set(endpoint.name, SANDBOX_ENDPOINT_BASE_PORT + i);
      }
      for (const f of forwarders) await chmod(path.join(socketsDir, f.socketName), 0o666);
      const sandbox = new BwrapSandbox(
        policy,
        helper,
        this.stdio,
        { forwarders, endpointPorts, files: durableFiles(this.options.workspaceRoot, policy.runId) },
        closers,
        this.options.monitorIntervalMs,
        elapsedMs,
      );
      this.sandboxes.add(sandbox);
      closers.push(async () => void this.sandboxes.delete(sandbox));
      return sandbox;
    } catch (err) {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      await helper.release(policy.runId, false).catch(() => undefined);
      throw new SandboxUnavailable(`cannot prepare the sandbox: ${(err as Error).message}`);
    }
  }
}

class BwrapSandbox implements RunSandbox {
  readonly keepsSnapshots = true;
  readonly workspaceDir = SANDBOX_WORKSPACE;
  startedFrom: string | undefined;
  snapshotFailure: string | undefined;
  private readonly live = new Set<SandboxProcess>();
  private durable: DurableProcess | undefined;
  private readonly forwarders: Forwarder[];
  private readonly endpointPorts: Map<string, number>;
  private readonly files: ReturnType<typeof durableFiles>;
  private limitHit: SandboxLimitHit | undefined;
  private destroyed: Promise<SandboxUsage> | undefined;
  private readonly wallClock: NodeJS.Timeout;
  private readonly monitor: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly policy: SandboxPolicy,
    private readonly helper: PrivilegedHelper,
    private readonly stdio: SocketPairs,
    served: {
      forwarders: Forwarder[];
      endpointPorts: Map<string, number>;
      files: ReturnType<typeof durableFiles>;
    },
    private readonly closers: Array<() => Promise<void>>,
    private readonly monitorIntervalMs: number,
    elapsedMs: number,
  ) {
    ({ forwarders: this.forwarders, endpointPorts: this.endpointPorts, files: this.files } = served);
    const left = Math.max(0, policy.limits.wallClockMs - elapsedMs);
    this.wallClock = setTimeout(() => this.endRun('timeout'), left);
    // A failed check (the workspace went away under it) is tried again at the next tick; it must not end the runner.
    this.monitor = setInterval(() => void this.check().catch(() => undefined), monitorIntervalMs);
    this.wallClock.unref();
    this.monitor.unref();
  }

  endpointUrl(name: string): string {
    const port = this.endpointPorts.get(name);
    if (port === undefined) throw new Error(`no sandbox endpoint named ${name}`);
    return `http://127.0.0.1:${port}`;
  }

  exec(options: SandboxExecOptions): SandboxProcess {
    const request = this.execRequest(options);
    if (options.durable) {
      const started = this.helper.execDurable({ ...request, input: options.stdin === 'pipe' });
      return this.track(this.durableProcess({ stdout: 0, stderr: 0 }, started, options.stdin === 'pipe'));
    }
    const proc = new BwrapProcess(
      this.helper,
      this.policy.runId,
      options.stdin === 'pipe',
      (stdio) => this.helper.exec(request, stdio),
      this.stdio,
      () => this.exitReason(),
    );
    return this.track(proc);
  }

  /** The durable process the previous runner process started, its output read on from `from`. */
  attachDurable(from: OutputOffsets): SandboxProcess {
    return this.track(this.durableProcess(from, Promise.resolve(), true));
  }

  /** The runner stops: the durable process goes on alone, for the next runner process to take back. */
  detach(): void {
    this.durable?.detach();
  }

  private durableProcess(from: OutputOffsets, started: Promise<void>, stdin: boolean): DurableProcess {
    const runId = this.policy.runId;
    this.durable = new DurableProcess(
      this.files,
      from,
      started,
      (action) => this.helper.durable(runId, action),
      {
        stdin,
        pollMs: Math.min(this.monitorIntervalMs, 100),
        reason: () => this.exitReason(),
      },
    );
    return this.durable;
  }

  private track<P extends SandboxProcess>(proc: P): P {
    if (this.destroyed || this.limitHit) void proc.kill(0);
    this.live.add(proc);
    void proc.exited.then(
      () => this.live.delete(proc),
      () => this.live.delete(proc),
    );
    return proc;
  }

  private execRequest(options: SandboxExecOptions) {
    const proxy = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
    const env = { ...options.env, ...proxyEnvironment(proxy, '127.0.0.1,localhost') };
    return {
      runId: this.policy.runId,
      argv: options.argv,
      env,
      cwd: path.posix.resolve(SANDBOX_WORKSPACE, options.cwd ?? '.'),
      // No forwarder, no way out: its network namespace holds only an unused loopback.
      forwarders: options.network === false ? [] : this.forwarders,
    };
  }

  async captureSnapshot(ref: SnapshotRef): Promise<string | undefined> {
    return (await this.helper.capture(this.policy.runId, ref)).snapshot;
  }

  dropSnapshot(ref: SnapshotRef): Promise<void> {
    return this.helper.dropSnapshot(ref);
  }

  /** A process ended or the monitor looked: did a limit end the run? (A full filesystem, a memory kill, a refused fork.) */
  private async exitReason(): Promise<SandboxLimitHit | undefined> {
    if (this.limitHit || this.destroyed) return this.limitHit;
    const status = await this.helper.status(this.policy.runId).catch(() => undefined);
    if (status?.disk?.full) this.endRun('disk');
    else if (status && status.oomKills > 0) this.endRun('memory');
    else if (
      status &&
      (status.forksRefused > 0 || (status.processes ?? 0) >= this.policy.limits.maxProcesses)
    )
      this.endRun('processes');
    return this.limitHit;
  }

  private endRun(limit: SandboxLimitHit): void {
    if (this.limitHit) return;
    this.limitHit = limit;
    for (const proc of this.live) void proc.kill(0);
  }

  private async check(): Promise<void> {
    if (this.checking || this.live.size === 0) return;
    this.checking = true;
    try {
      await this.exitReason();
    } finally {
      this.checking = false;
    }
  }

  destroy(options: { keepWorkspace?: boolean } = {}): Promise<SandboxUsage> {
    this.destroyed ??= (async () => {
      clearTimeout(this.wallClock);
      clearInterval(this.monitor);
      await Promise.all([...this.live].map((p) => p.kill(0)));
      for (const close of this.closers.reverse()) await close().catch(() => undefined);
      const { diskBytes } = await this.helper.release(
        this.policy.runId,
        options.keepWorkspace === true && !this.limitHit,
      );
      return { diskBytes, ...(this.limitHit ? { limit: this.limitHit } : {}) };
    })();
    return this.destroyed;
  }
}

type Start = (stdio: Array<net.Socket | undefined>) => ReturnType<PrivilegedHelper['exec']>;

/**
 * A command in the sandbox, started by the helper with its stdio on socket pairs whose near ends are read here. It
 * has ended once the helper reports bwrap's exit and both output sockets are closed (everything inside is gone).
 */
class BwrapProcess implements SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly exited: Promise<SandboxExit>;
  private readonly started: Promise<number | undefined>;
  private done = false;

  constructor(
    private readonly helper: PrivilegedHelper,
    private readonly runId: string,
    withStdin: boolean,
    start: Start,
    pairs: SocketPairs,
    reason: () => Promise<SandboxLimitHit | undefined>,
  ) {
    const stdin = withStdin ? new PassThrough() : undefined;
    this.stdin = stdin ?? null;
    const launched = (async () => {
      const [input, output, errors] = await Promise.all([
        stdin ? pairs.pair() : undefined,
        pairs.pair(),
        pairs.pair(),
      ]);
      const closed = [output, errors].map(
        ({ near }, i) =>
          new Promise<void>((resolve) => {
            near.on('error', () => undefined);
            near.once('close', () => resolve());
            near.pipe(i === 0 ? this.stdout : this.stderr);
          }),
      );
      try {
        const { execId, exited } = await start([input?.far, output.far, errors.far]);
        // Only now: the helper no longer holds the socket, so what is written goes to the process alone.
        if (stdin && input) {
          input.near.on('error', () => undefined);
          stdin.pipe(input.near);
        }
        return { execId, exited: exited.then(async (exit) => (await Promise.all(closed), exit)) };
      } catch (err) {
        for (const pair of [input, output, errors]) pair?.near.destroy();
        throw err;
      }
    })();
    this.started = launched.then(
      (l) => l.execId,
      () => undefined,
    );
    this.exited = launched.then(
      async ({ exited }) => {
        const exit = await exited;
        this.done = true;
        const limit = await reason();
        return { code: exit.code, signal: exit.signal, ...(limit ? { limit } : {}) };
      },
      (err: Error) => {
        this.done = true;
        this.stderr.end(`sandbox: ${err.message}\n`);
        this.stdout.end();
        return { code: 125, signal: null };
      },
    );
  }

  /** SIGTERM to everything inside, then after `graceMs` SIGKILL to bwrap too, which takes its pid namespace down. */
  async kill(graceMs = 2000): Promise<void> {
    const execId = await this.started;
    if (execId === undefined || this.done) return this.exited.then(() => undefined);
    if (graceMs > 0) {
      await this.helper.signal(this.runId, execId, 'SIGTERM').catch(() => undefined);
      const timer = new Promise((r) => setTimeout(r, graceMs).unref());
      await Promise.race([this.exited, timer]);
    }
    if (!this.done) await this.helper.signal(this.runId, execId, 'SIGKILL').catch(() => undefined);
    await this.exited;
  }
}
