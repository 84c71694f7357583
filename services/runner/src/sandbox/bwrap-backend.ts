import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { lstatSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '@conveyor/logger';
import {
  bwrapOptions,
  hostArgv,
  innerArgv,
  nulSeparated,
  SANDBOX_ENDPOINT_BASE_PORT,
  SANDBOX_PROXY_PORT,
  SANDBOX_WORKSPACE,
  type BwrapLayout,
  type Forwarder,
} from './bwrap-args';
import { EgressProxy, reportEgress } from './egress-proxy';
import { countOwnedBy } from './host-processes';
import { descendantsOf, signalAll } from './process-tree';
import { RunCgroup } from './run-cgroup';
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
} from './run-sandbox';
import { writeSeccompFilter } from './seccomp-filter';
import { SocketBridge } from './socket-bridge';

export interface BwrapBackendOptions {
  /** Host paths visible read-only inside every sandbox besides /usr (e.g. the agent CLIs' node_modules). */
  readOnlyPaths: string[];
  /** `host:port` pairs on private networks runs may reach through the egress proxy (SANDBOX_INTERNAL_HOSTS). */
  internalHosts: string[];
  /** Host directory of the per-run socket directories. */
  stateDir: string;
  /** How often the disk use of the workspace and the process count are checked. */
  monitorIntervalMs: number;
  logger: Logger;
}

/** Per-run uids come from this range: never a real account, never shared by two live runs in practice. */
const UID_BASE = 1_000_000;
const UID_SPAN = 1_000_000;
const REQUIRED_COMMANDS = ['bwrap', 'socat', 'setpriv', 'prlimit', 'du'];
const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function which(command: string): string | undefined {
  const found = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', command], {
    encoding: 'utf8',
    env: { PATH: HOST_PATH },
  });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** `/bin`, `/lib`… as symlinks into /usr where the host has them so (usrmerge), so the same names resolve inside. */
function usrSymlinks(): Record<string, string> {
  const links: Record<string, string> = {};
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    try {
      if (lstatSync(`/${name}`).isSymbolicLink()) links[name] = readlinkSync(`/${name}`);
    } catch {
      // absent on this host
    }
  }
  return links;
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

export async function workspaceBytes(dir: string): Promise<number> {
  const du = spawn('du', ['-sb', dir], { stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: HOST_PATH } });
  let out = '';
  du.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => du.once('close', resolve));
  return Number(out.split('\t')[0]) || 0;
}

/**
 * The local backend (docs/sandbox.md): bubblewrap with every namespace unshared, each run under its own unprivileged
 * uid (so RLIMIT_NPROC counts the run's processes alone), memory in a cgroup where the host lets us create one,
 * network only through socat forwarders to the runner's egress proxy and the policy's endpoints.
 */
export class BwrapBackend implements SandboxBackend {
  readonly name = 'bubblewrap';
  private bwrapPath = 'bwrap';
  /** Built by `check()`; a backend without it prepares no sandbox. */
  private seccompFile: string | undefined;
  /** Whether runs' memory and processes are held by cgroups here (else by rlimits alone; docs/sandbox.md). */
  usesCgroups = false;

  constructor(private readonly options: BwrapBackendOptions) {}

  async check(): Promise<void> {
    if (process.getuid?.() !== 0) {
      throw new SandboxUnavailable(
        'the local sandbox gives every run its own uid and needs the runner to start as root (or set RUN_SANDBOX=none for development)',
      );
    }
    const missing = REQUIRED_COMMANDS.filter((c) => !which(c));
    if (missing.length > 0)
      throw new SandboxUnavailable(
        `missing ${missing.join(', ')}: run scripts/infra.sh up (it installs bubblewrap and socat)`,
      );
    this.bwrapPath = which('bwrap')!;
    // Runs' uids must traverse (not list) the state directory to reach their sockets.
    await mkdir(this.options.stateDir, { recursive: true, mode: 0o711 });
    await chmod(this.options.stateDir, 0o711);
    this.seccompFile = await writeSeccompFilter(this.options.stateDir);
    for (const p of [this.options.stateDir, ...this.options.readOnlyPaths])
      assertTraversable(path.join(p, 'x'));
    const probeRoot = await mkdtemp(path.join(this.options.stateDir, 'probe-'));
    try {
      const sandbox = await this.prepare({
        runId: path.basename(probeRoot),
        workspaceDir: probeRoot,
        allowedHosts: [],
        endpoints: [],
        limits: {
          wallClockMs: 30_000,
          maxProcesses: 64,
          memoryBytes: 256 * 1024 * 1024,
          diskBytes: 1024 * 1024,
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
    } finally {
      await rm(probeRoot, { recursive: true, force: true });
    }
    this.options.logger.info(
      { cgroups: this.usesCgroups },
      this.usesCgroups
        ? 'local sandbox ready: bubblewrap, per-run uid, memory and pids cgroups'
        : 'local sandbox ready: bubblewrap, per-run uid; no writable cgroups here: memory capped per process (RLIMIT_DATA), processes by RLIMIT_NPROC',
    );
  }

  async prepare(policy: SandboxPolicy): Promise<RunSandbox> {
    assertTraversable(policy.workspaceDir);
    if (!this.seccompFile) throw new SandboxUnavailable('the seccomp filter was not built (check() first)');
    const uid = UID_BASE + randomInt(UID_SPAN);
    const socketsDir = await mkdtemp(path.join(this.options.stateDir, 's-'));
    const closers: Array<() => Promise<void>> = [() => rm(socketsDir, { recursive: true, force: true })];
    try {
      await chmod(socketsDir, 0o755);
      const chown = spawnSync('chown', ['-R', `${uid}:${uid}`, policy.workspaceDir], {
        env: { PATH: HOST_PATH },
        encoding: 'utf8',
      });
      if (chown.status !== 0)
        throw new SandboxUnavailable(`cannot hand the workspace to the run's uid: ${chown.stderr}`);
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
      const cgroup = await RunCgroup.create(`${policy.runId}-${uid}`, policy.limits);
      if (cgroup) closers.push(() => cgroup.destroy());
      this.usesCgroups = cgroup !== undefined;
      const layout: BwrapLayout = {
        workspaceDir: policy.workspaceDir,
        socketsDir,
        readOnlyPaths: this.options.readOnlyPaths,
        usrSymlinks: usrSymlinks(),
        forwarders,
        seccompFile: this.seccompFile,
      };
      return new BwrapSandbox(
        policy,
        layout,
        uid,
        this.bwrapPath,
        cgroup,
        endpointPorts,
        closers,
        this.options.monitorIntervalMs,
      );
    } catch (err) {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      if (err instanceof SandboxUnavailable) throw err;
      throw new SandboxUnavailable(`cannot prepare the sandbox: ${(err as Error).message}`);
    }
  }
}

class BwrapSandbox implements RunSandbox {
  readonly workspaceDir = SANDBOX_WORKSPACE;
  private readonly live = new Set<BwrapProcess>();
  private limitHit: SandboxLimitHit | undefined;
  private destroyed: Promise<SandboxUsage> | undefined;
  private readonly wallClock: NodeJS.Timeout;
  private readonly monitor: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly policy: SandboxPolicy,
    private readonly layout: BwrapLayout,
    private readonly uid: number,
    private readonly bwrapPath: string,
    private readonly cgroup: RunCgroup | undefined,
    private readonly endpointPorts: Map<string, number>,
    private readonly closers: Array<() => Promise<void>>,
    monitorIntervalMs: number,
  ) {
    this.wallClock = setTimeout(() => this.endRun('timeout'), policy.limits.wallClockMs);
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
    const proxy = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
    const env = {
      ...options.env,
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    };
    const cwd = this.insideCwd(options.cwd);
    const argv = hostArgv(
      {
        uid: this.uid,
        // One above the cgroup's task limit, so that where there is a cgroup it is what refuses (and counts) first.
        maxProcesses: this.policy.limits.maxProcesses + (this.cgroup ? 1 : 0),
        ...(this.cgroup ? {} : { dataBytes: this.policy.limits.memoryBytes }),
        cgroupProcs: this.cgroup?.procsFiles ?? [],
      },
      this.layout.seccompFile,
      this.bwrapPath,
      innerArgv(this.layout.forwarders, options.argv),
    );
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { PATH: HOST_PATH },
      stdio: [options.stdin === 'pipe' ? 'pipe' : 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    const fd3 = child.stdio[3] as Writable;
    fd3.on('error', () => undefined);
    fd3.end(nulSeparated(bwrapOptions(this.layout, env, cwd)));
    const proc = new BwrapProcess(child, () => this.exitReason());
    if (this.destroyed || this.limitHit) void proc.kill(0);
    this.live.add(proc);
    void proc.exited.then(() => this.live.delete(proc));
    return proc;
  }

  /** Callers may pass the host path of the workspace (or a directory under it): map it to the inside path. */
  private insideCwd(cwd: string | undefined): string {
    if (!cwd) return SANDBOX_WORKSPACE;
    const rel = path.relative(this.policy.workspaceDir, cwd);
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) return path.posix.join(SANDBOX_WORKSPACE, rel);
    return path.posix.resolve(SANDBOX_WORKSPACE, cwd);
  }

  private async exitReason(): Promise<SandboxLimitHit | undefined> {
    if (!this.limitHit && this.cgroup) {
      if ((await this.cgroup.oomKills()) > 0) this.endRun('memory');
      else if ((await this.cgroup.forksRefused()) > 0) this.endRun('processes');
    }
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
      if ((await workspaceBytes(this.policy.workspaceDir)) > this.policy.limits.diskBytes)
        this.endRun('disk');
      else if (!this.cgroup && (await countOwnedBy(this.uid)) >= this.policy.limits.maxProcesses)
        this.endRun('processes');
      else await this.exitReason();
    } finally {
      this.checking = false;
    }
  }

  destroy(): Promise<SandboxUsage> {
    this.destroyed ??= (async () => {
      clearTimeout(this.wallClock);
      clearInterval(this.monitor);
      await Promise.all([...this.live].map((p) => p.kill(0)));
      for (const close of this.closers.reverse()) await close().catch(() => undefined);
      return {
        diskBytes: await workspaceBytes(this.policy.workspaceDir),
        ...(this.limitHit ? { limit: this.limitHit } : {}),
      };
    })();
    return this.destroyed;
  }
}

class BwrapProcess implements SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exited: Promise<SandboxExit>;

  constructor(
    private readonly child: ChildProcess,
    reason: () => Promise<SandboxLimitHit | undefined>,
  ) {
    this.stdin = child.stdin;
    this.stdout = child.stdout!;
    this.stderr = child.stderr!;
    this.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('close', (code, sig) => {
        void reason().then((limit) => resolve({ code, signal: sig, ...(limit ? { limit } : {}) }));
      });
    });
  }

  /** SIGTERM to everything inside (bwrap does not forward signals), then SIGKILL to bwrap, which takes its pid namespace down. */
  async kill(graceMs = 2000): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null)
      return this.exited.then(() => undefined);
    if (graceMs > 0) {
      signalAll(descendantsOf(pid), 'SIGTERM');
      const timer = new Promise((r) => setTimeout(r, graceMs).unref());
      await Promise.race([this.exited, timer]);
    }
    signalAll([pid, ...descendantsOf(pid)], 'SIGKILL');
    await this.exited;
  }
}
