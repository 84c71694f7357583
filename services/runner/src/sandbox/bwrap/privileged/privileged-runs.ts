import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, lchown, mkdir, rmdir } from 'node:fs/promises';
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { bwrapOptions, hostArgv, innerArgv, nulSeparated, type BwrapLayout } from '../bwrap-args';
import { pidsOwnedBy } from '../host-processes';
import { descendantsOf, signalAll } from '../../process-tree';
import { RunCgroup } from '../run-cgroup';
import { writeSeccompFilter } from '../seccomp-filter';
import type { HelperRequest, HelperSettings, RunStatus } from './helper-protocol';
import { RunDisks } from './run-disks';
import { copyFrozen } from './frozen-copy';
import { SnapshotStore } from '../../snapshot-store';
import { DurableCommands, type DurableRecord } from './durable-commands';

const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

type Open = Extract<HelperRequest, { op: 'open' }>;
type Exec = Extract<HelperRequest, { op: 'exec' }>;
type DurableAction = Extract<HelperRequest, { op: 'durable' }>['action'];
type SnapshotRef = Extract<HelperRequest, { op: 'capture' }>['snapshot'];

interface OpenRun {
  uid: number;
  limits: Open['limits'];
  cgroup: RunCgroup | undefined;
  socketsDir: string;
  children: Map<number, ChildProcess>;
  openedAt: number;
  /** The keeper of the run's durable command (the agent), which outlives this helper. */
  keeper?: number;
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

export class HelperRefusal extends Error {}

/**
 * What the privileged helper does for the runner, one run at a time: mount the run's filesystem, create its cgroups,
 * start its commands as the run's uid inside bubblewrap, signal them, report their resource use, release it all.
 * Every path and uid comes from the run ID and the helper's own settings; a run must be opened before anything else.
 */
export class PrivilegedRuns {
  private readonly runs = new Map<string, OpenRun>();
  private readonly disks: RunDisks;
  readonly snapshots: SnapshotStore;
  private readonly symlinks = usrSymlinks();
  /** Built by `init()` into a root-only directory: what the runner could replace would not be loaded. */
  private seccompFile = '';
  /** Names this runner's cgroups: one runner per workspace root (its filesystems live there). */
  private readonly cgroupOwner: string;
  private readonly durable: DurableCommands;
  /** Runs whose agents outlived the previous helper, until this one's runner adopts them or lets them go. */
  private leftovers = new Map<string, DurableRecord>();

  constructor(
    private readonly settings: HelperSettings,
    private readonly onExit: (execId: number, code: number | null, signal: NodeJS.Signals | null) => void,
  ) {
    this.disks = new RunDisks(settings.workspaceRoot);
    this.snapshots = new SnapshotStore(settings.workspaceRoot, settings.snapshots);
    this.cgroupOwner = createHash('sha256')
      .update(path.resolve(settings.workspaceRoot))
      .digest('hex')
      .slice(0, 12);
    this.durable = new DurableCommands(settings.workspaceRoot, {
      uid: settings.runnerUid,
      gid: settings.runnerGid,
    });
  }

  /** The state directory belongs to the runner (it listens on the runs' sockets there); runs' uids only traverse it. */
  async init(): Promise<void> {
    // Runs whose agent outlived the last runner process keep their filesystem (and groups, which hold processes)
    // for this one to take back (`adopt`); everything else a crash left goes.
    this.leftovers = await this.durable.adoptable();
    await this.disks.init(new Set(this.leftovers.keys()));
    await this.snapshots.init();
    await RunCgroup.removeStale(this.cgroupOwner);
    const own = path.join(this.settings.workspaceRoot, '.helper');
    await mkdir(own, { recursive: true, mode: 0o700 });
    await chmod(own, 0o700);
    this.seccompFile = await writeSeccompFilter(own);
    await mkdir(this.settings.stateDir, { recursive: true, mode: 0o711 });
    await lchown(this.settings.stateDir, this.settings.runnerUid, this.settings.runnerGid);
    await chmod(this.settings.stateDir, 0o711);
  }

  async open({ runId, limits, snapshot }: Open): Promise<{
    uid: number;
    cgroups: boolean;
    socketsDir: string;
    snapshot?: string;
    snapshotFailure?: string;
  }> {
    if (this.runs.has(runId)) throw new HelperRefusal('run already open');
    const layered = await this.openFromSnapshot(runId, limits.diskBytes, snapshot);
    const uid =
      layered.uid ??
      (await this.disks.open(runId, limits.diskBytes).catch(async (err: Error) => {
        await this.disks.release(runId, false).catch(() => undefined);
        throw new HelperRefusal(`cannot mount the run's filesystem: ${err.message}`);
      }));
    const cgroup = await RunCgroup.create(this.cgroupOwner, `${runId}-${uid}`, limits);
    // A short name: unix socket paths are limited to 108 bytes. The runner creates its sockets in it.
    const socketsDir = path.join(this.settings.stateDir, `s-${randomBytes(6).toString('hex')}`);
    await mkdir(socketsDir, { mode: 0o755 });
    await lchown(socketsDir, this.settings.runnerUid, this.settings.runnerGid);
    this.runs.set(runId, { uid, limits, cgroup, socketsDir, children: new Map(), openedAt: Date.now() });
    const { id, failure } = layered;
    return {
      uid,
      cgroups: cgroup !== undefined,
      socketsDir,
      ...(id ? { snapshot: id } : {}),
      ...(failure ? { snapshotFailure: failure } : {}),
    };
  }

  /**
   * A fresh run of an environment with a snapshot starts on it. Fails closed to a cold start: a snapshot that cannot
   * be mounted leaves nothing behind, and the run gets an ordinary empty filesystem (and runs its setup).
   */
  private async openFromSnapshot(
    runId: string,
    diskBytes: number,
    ref: SnapshotRef | undefined,
  ): Promise<{ uid?: number; id?: string; failure?: string }> {
    if (!ref || (await this.disks.hasRecord(runId))) return {};
    const found = await this.snapshots.find(ref);
    if (!found) return {};
    try {
      return { uid: await this.disks.open(runId, diskBytes, found), id: found.id };
    } catch (err) {
      await this.disks.release(runId, false).catch(() => undefined);
      return { failure: (err as Error).message };
    }
  }

  /** Keeps the run's workspace as an environment snapshot: only between commands, and not one itself layered. */
  async capture(runId: string, ref: SnapshotRef): Promise<{ snapshot?: string }> {
    const run = this.opened(runId);
    if (run.children.size > 0) throw new HelperRefusal('a command of the run is running');
    if (await this.disks.layered(runId)) throw new HelperRefusal('the run started from a snapshot');
    const mounted = await this.disks.diskMount(runId);
    const id = await this.snapshots.capture(ref, run.uid, (target) =>
      copyFrozen(mounted, this.disks.imageOf(runId), target),
    );
    return id ? { snapshot: id } : {};
  }

  /**
   * Takes back a run whose durable command a previous helper started (the runner restarted): its filesystem is still
   * mounted, its groups hold its processes, its socket directory is where the sandbox's forwarders connect.
   */
  async adopt(
    runId: string,
  ): Promise<{ uid: number; cgroups: boolean; socketsDir: string; openedAt: number }> {
    if (this.runs.has(runId)) throw new HelperRefusal('run already open');
    const record = this.leftovers.has(runId) ? await this.durable.find(runId) : undefined;
    if (!record) throw new HelperRefusal("the run's agent process is gone");
    this.leftovers.delete(runId);
    if (!(await this.disks.usage(runId))) throw new HelperRefusal("the run's filesystem is not mounted");
    const cgroup = await RunCgroup.create(this.cgroupOwner, `${runId}-${record.uid}`, record.limits, true);
    const { uid, limits, socketsDir, keeper, openedAt } = record;
    this.runs.set(runId, { uid, limits, cgroup, socketsDir, children: new Map(), keeper, openedAt });
    return { uid, cgroups: cgroup !== undefined, socketsDir, openedAt };
  }

  /**
   * Ends what the previous runner process left that this one does not take back (its run ended meanwhile, or it
   * has no record of it): the agent's keeper and everything of the run's uid, its groups, its filesystem.
   */
  async releaseLeftovers(adopting: string[]): Promise<string[]> {
    const released: string[] = [];
    for (const [runId, record] of this.leftovers) {
      if (adopting.includes(runId)) continue;
      this.leftovers.delete(runId);
      signalAll([record.keeper, ...descendantsOf(record.keeper)], 'SIGKILL');
      signalAll(await pidsOwnedBy(record.uid), 'SIGKILL');
      const cgroup = await RunCgroup.create(this.cgroupOwner, `${runId}-${record.uid}`, record.limits, true);
      await cgroup?.destroy();
      await this.disks.release(runId, false);
      await this.durable.discard(runId);
      released.push(runId);
    }
    return released;
  }

  /** Starts a command with its stdio on the runner's sockets (never relayed here); fd 3 carries bwrap's options. */
  exec(request: Exec, stdio: Map<number, Socket>): number {
    const run = this.opened(request.runId);
    if (run.children.has(request.execId)) throw new HelperRefusal('execution already started');
    const [stdout, stderr] = [stdio.get(1), stdio.get(2)];
    if (!stdout || !stderr) throw new HelperRefusal('stdout and stderr sockets are required');
    const argv = this.commandArgv(run, request);
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { PATH: HOST_PATH },
      stdio: [stdio.get(0) ?? 'ignore', stdout, stderr, 'pipe'],
    });
    // The child holds its own copies; ours would keep the runner's ends from seeing EOF.
    for (const socket of stdio.values()) socket.destroy();
    const fd3 = child.stdio[3] as Writable;
    fd3.on('error', () => undefined);
    fd3.end(this.bwrapArgs(run, request));
    run.children.set(request.execId, child);
    let reported = false;
    const report = (code: number | null, signal: NodeJS.Signals | null) => {
      if (reported) return;
      reported = true;
      run.children.delete(request.execId);
      this.onExit(request.execId, code, signal);
    };
    child.once('error', () => report(127, null));
    child.once('exit', report);
    return child.pid ?? 0;
  }

  /**
   * Starts the run's durable command (its agent) under a keeper of its own, with stdio on files: it outlives this
   * helper and the runner, and a later runner takes it back (docs/run-lifecycle.md "Runner restarts"). One at a time.
   */
  async execDurable(request: Exec): Promise<number> {
    const run = this.opened(request.runId);
    if (run.keeper !== undefined && (await this.durable.find(request.runId)))
      throw new HelperRefusal('a durable command of the run is running');
    run.keeper = await this.durable.start(
      request.runId,
      this.commandArgv(run, request),
      this.bwrapArgs(run, request),
      { uid: run.uid, limits: run.limits, socketsDir: run.socketsDir, openedAt: run.openedAt },
      request.input === true,
    );
    return run.keeper;
  }

  /** Ends the durable command's input (the keeper closes the FIFO), or signals it like `signal`. */
  durableAction(runId: string, action: DurableAction): void {
    const keeper = this.opened(runId).keeper;
    if (keeper === undefined) return;
    if (action === 'end-input') return signalAll([keeper], 'SIGUSR1');
    // bwrap is the keeper's one child (first in the walk): SIGTERM goes to what runs inside it, SIGKILL to bwrap
    // too — never to the keeper, which writes the exit status.
    const tree = descendantsOf(keeper);
    signalAll(action === 'SIGKILL' ? tree : tree.slice(1), action);
  }

  private commandArgv(run: OpenRun, request: Exec): string[] {
    return hostArgv(
      {
        uid: run.uid,
        // One above the cgroup's task limit, so that where there is a cgroup it is what refuses (and counts) first.
        maxProcesses: run.limits.maxProcesses + (run.cgroup ? 1 : 0),
        ...(run.cgroup ? {} : { dataBytes: run.limits.memoryBytes }),
        cgroupProcs: run.cgroup?.procsFiles ?? [],
      },
      this.seccompFile,
      this.settings.bwrapPath,
      innerArgv(request.forwarders, request.argv),
    );
  }

  private bwrapArgs(run: OpenRun, request: Exec): Buffer {
    const layout: BwrapLayout = {
      workspaceDir: this.disks.workspaceDir(request.runId),
      socketsDir: run.socketsDir,
      readOnlyPaths: this.settings.readOnlyPaths,
      usrSymlinks: this.symlinks,
      forwarders: request.forwarders,
      seccompFile: this.seccompFile,
    };
    return nulSeparated(bwrapOptions(layout, request.env, request.cwd));
  }

  /**
   * SIGTERM to what runs inside (bwrap does not forward signals); SIGKILL to bwrap too, which takes its namespace down.
   * A SIGKILL then ends every process of the run's uid that none of its other commands holds: bwrap's child, cloned
   * as bwrap was killed, can miss both the tree read here and bwrap's die-with-parent (set in the child after the
   * clone), and would live on, reparented, holding the command's output open (seen under load: a run at its
   * wall-clock limit whose `sleep` outlived the kill).
   */
  async signal(runId: string, execId: number, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const run = this.opened(runId);
    const pid = run.children.get(execId)?.pid;
    if (pid === undefined) return;
    if (signal === 'SIGTERM') return signalAll(descendantsOf(pid), signal);
    signalAll([pid, ...descendantsOf(pid)], signal);
    const held = [...run.children]
      .filter(([id]) => id !== execId)
      .map(([, child]) => child.pid)
      .concat(run.keeper)
      .flatMap((other) => (other === undefined ? [] : [other, ...descendantsOf(other)]));
    const stray = (await pidsOwnedBy(run.uid)).filter((p) => !held.includes(p));
    signalAll(stray, signal);
  }

  async status(runId: string): Promise<RunStatus> {
    const run = this.opened(runId);
    const disk = await this.disks.usage(runId);
    return {
      ...(disk ? { disk } : {}),
      ...(run.cgroup ? {} : { processes: (await pidsOwnedBy(run.uid)).length }),
      oomKills: (await run.cgroup?.oomKills()) ?? 0,
      forksRefused: (await run.cgroup?.forksRefused()) ?? 0,
    };
  }

  /** Ends every process of the run's uid, removes its cgroups and its socket directory, unmounts its filesystem. */
  async release(runId: string, keep: boolean): Promise<{ diskBytes: number }> {
    const run = this.opened(runId);
    this.runs.delete(runId);
    signalAll(await pidsOwnedBy(run.uid), 'SIGKILL');
    await run.cgroup?.destroy();
    const diskBytes = (await this.disks.usage(runId))?.usedBytes ?? 0;
    await this.disks.release(runId, keep);
    await this.durable.discard(runId);
    // Emptied by the runner, which owns what is in it; removed here only if it is.
    await rmdir(run.socketsDir).catch(() => undefined);
    return { diskBytes };
  }

  async discard(runId: string): Promise<void> {
    if (this.runs.has(runId)) throw new HelperRefusal('run is open');
    await this.disks.discard(runId);
  }

  /**
   * The runner is gone: what it was doing for a run dies with it, except a run's durable command (its agent), left
   * with its filesystem and groups for the next runner process to take back.
   */
  async releaseAll(): Promise<void> {
    for (const [runId, run] of [...this.runs.entries()])
      if (run.keeper === undefined) await this.release(runId, false).catch(() => undefined);
  }

  private opened(runId: string): OpenRun {
    const run = this.runs.get(runId);
    if (!run) throw new HelperRefusal('run not open');
    return run;
  }
}
