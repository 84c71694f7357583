import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { Logger } from '@conveyor/logger';
import { EgressFilter, reportEgress } from '../egress-proxy';
import { KubernetesApiError, type ExecStatus, type KubernetesClient } from './kubernetes-api';
import {
  podExecCommand,
  POD_WORKSPACE,
  runLabels,
  runNetworkPolicy,
  runPod,
  type PodCpu,
  type PodPlacement,
  type PodSettings,
} from './kubernetes-objects';
import { podLossCause, reportingLoss, whileInProgress } from './pod-loss';
import { durableLaunch, PodDurableProcess } from './pod-durable';
import { reopenRunPod } from './pod-reopen';
import type { PodCheckpoints } from './pod-checkpoints';
import { gatewayUrls, type RunGateway } from './run-gateway';
import type { PodSnapshots, SnapshotMount } from './pod-snapshots';
import { waitForPodStart, type PodStartBounds } from './pod-start';
import type { VolumeSnapshots, WorkspaceClaim } from './volume-snapshots';
import type { WarmPods } from './warm-pods';
import {
  SandboxUnavailable,
  type RunSandbox,
  type SandboxBackend,
  type SandboxExecOptions,
  type SandboxExit,
  type OutputOffsets,
  type SandboxLimitHit,
  type SandboxPolicy,
  type SandboxProcess,
  type SandboxUsage,
  type SnapshotRef,
} from '../run-sandbox';
import { proxyEnvironment } from '../run-environment';

/** Between two reads of a starting Pod's status. */
const POD_POLL_MS = 500;

export interface KubernetesBackendOptions {
  namespace: string;
  /**
   * Every runner replica's gateway (run-gateway.ts), and its Service's `ip:port` as run Pods reach it: a run's egress
   * filter and endpoints answer there whichever replica holds the run.
   */
  gateway: { server: RunGateway; address: string };
  /** This runner pod: named on its warm Pods; never the owner of a run's Pod, which outlives it for an adopter. */
  runnerPod?: { name: string; uid: string };
  /** Labels of the runner pods, which the runs' NetworkPolicies allow (on the gateway's port) as their only destination. */
  runnerPodLabels: Record<string, string>;
  /** Image of environments that name none. */
  defaultImage: string;
  cpu: PodCpu;
  /** Where run Pods go; absent, wherever the scheduler puts them. */
  placement?: PodPlacement;
  internalHosts: string[];
  /** How long a Pod may take to be scheduled and start (image pull included), and to stay unschedulable. */
  podStart: Omit<PodStartBounds, 'pollMs'>;
  /** Environment snapshots kept by this runner (docs/snapshots.md); absent, runs neither make nor use them. */
  snapshots?: PodSnapshots;
  /** Each run's last turn on the shared claim, for a run whose Pod is lost (pod-checkpoints.ts). */
  checkpoints?: PodCheckpoints;
  /** Started Pods a run without a snapshot to mount takes instead of starting its own (warm-pods.ts). */
  warmPods?: WarmPods;
  /**
   * Snapshots as CSI VolumeSnapshots (volume-snapshots.ts): each run's workspace is a claim, cloned from its team's
   * snapshot when there is one; `snapshots` is then not used.
   */
  volumeSnapshots?: VolumeSnapshots;
  logger: Logger;
}

/**
 * The container backend (docs/sandbox.md, deploy/README.md): one Pod per run from the environment's image, with a
 * NetworkPolicy that lets it reach only the runner replicas' run gateway, where its key opens its egress filter and
 * endpoints; commands run through the exec API. Run on a real cluster by tests/kubernetes (`npm run test:kubernetes`).
 */
export class KubernetesBackend implements SandboxBackend {
  readonly name = 'kubernetes';
  readonly snapshots: SandboxBackend['snapshots'];
  readonly warmPods: SandboxBackend['warmPods'];

  constructor(
    private readonly options: KubernetesBackendOptions,
    /** The runner passes clusterClient() (kubernetes-client.ts). */
    private readonly api: KubernetesClient,
  ) {
    const store = options.snapshots;
    if (store && !options.volumeSnapshots) this.snapshots = { stats: () => store.stats() };
    this.checkpointDir = options.checkpoints?.dir;
    this.warmPods = options.warmPods;
  }

  readonly checkpointDir: string | undefined;
  /** The runs' sandboxes here now, whose agents `detach` leaves running for whichever replica adopts the runs. */
  private readonly sandboxes = new Set<KubernetesSandbox>();

  async check(): Promise<void> {
    try {
      await this.api.probe(this.options.namespace);
    } catch (err) {
      throw new SandboxUnavailable(
        `cannot use the Kubernetes API in namespace ${this.options.namespace}: ${describe(err)}`,
      );
    }
    try {
      await this.options.snapshots?.init();
    } catch (err) {
      throw new SandboxUnavailable(`cannot keep environment snapshots: ${(err as Error).message}`);
    }
    try {
      await this.options.warmPods?.start();
    } catch (err) {
      throw new SandboxUnavailable(`cannot keep warm run pods: ${describe(err)}`);
    }
  }

  /** The workspace lives in the run's Pod and goes with it: nothing is kept on the runner. */
  async discardWorkspace(): Promise<void> {}

  /**
   * A warm Pod when the pool has one for the run, else a new Pod's name. A run whose snapshot is mounted gets a Pod of
   * its own: a warm one cannot get a new mount (docs/sandbox.md, warm run Pods).
   */
  private async choosePod(policy: SandboxPolicy) {
    const image = policy.image ?? this.options.defaultImage;
    const { warmPods } = this.options;
    const mountable =
      policy.snapshot !== undefined &&
      !this.options.volumeSnapshots &&
      (await this.options.snapshots?.mounts(
        policy.snapshot,
        warmPods?.serves(image) ? warmPods.streamMaxBytes : 0,
      )) === true;
    // A resumed run's checkpoint, like a mounted snapshot, is a volume: only a Pod made for the run can have it.
    const warm =
      mountable || policy.resumeFromCheckpoint || this.options.volumeSnapshots
        ? undefined
        : warmPods?.take(image, policy.limits);
    const name =
      warm?.name ??
      `run-${policy.runId
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '')
        .slice(0, 40)}-${randomBytes(3).toString('hex')}`;
    return { image, name, warm, mountable };
  }

  async prepare(policy: SandboxPolicy): Promise<RunSandbox> {
    const { namespace } = this.options;
    const closers: Array<() => Promise<unknown>> = [];
    try {
      const { image, name, warm, mountable } = await this.choosePod(policy);
      const log = this.options.logger.child({ runId: policy.runId, pod: name });
      if (warm) closers.push(() => this.api.deletePod(namespace, name));
      const { gateway } = this.options;
      const registration = await gateway.server.register({
        runId: policy.runId,
        egress: new EgressFilter(
          { allowedHosts: policy.allowedHosts, internalHosts: this.options.internalHosts },
          reportEgress(policy, log),
        ),
        endpoints: policy.endpoints,
      });
      closers.push(() => registration.close());
      const mount = mountable ? await this.options.snapshots?.mount(policy.snapshot!, name) : undefined;
      if (mount) closers.push(() => mount.release());
      const checkpoint = policy.resumeFromCheckpoint
        ? await this.options.checkpoints?.mount(policy.runId)
        : undefined;
      const { volumeSnapshots } = this.options;
      const claim = await volumeSnapshots?.workspaceClaim(name, policy.limits.diskBytes, policy.snapshot);
      if (claim) {
        await volumeSnapshots!.createClaim(claim);
        closers.push(() => volumeSnapshots!.deleteClaim(claim.name));
      }
      const settings: PodSettings = {
        namespace,
        name,
        image,
        runnerPodLabels: this.options.runnerPodLabels,
        labels: runLabels(policy),
        ...(this.options.runnerPod ? { owner: this.options.runnerPod } : {}),
        gatewayPort: gateway.server.port,
        cpu: this.options.cpu,
        ...(this.options.placement ? { placement: this.options.placement } : {}),
        ...(mount ? { snapshot: mount.volume } : {}),
        ...(checkpoint ? { checkpoint } : {}),
        ...(claim ? { workspaceClaim: claim.name } : {}),
      };
      // Before the Pod may hold anything of the run: its key and the team's files enter only by exec, later.
      const networkPolicy = this.api.createNetworkPolicy(namespace, runNetworkPolicy(settings)).then(() => {
        closers.push(() => this.api.deleteNetworkPolicy(namespace, name));
      });
      if (warm) {
        // A warm Pod is under the pool's deny-all policy until then: its claim need not wait for the run's policy.
        await bothSettled(networkPolicy, warm.claim(policy));
      } else {
        await networkPolicy;
        await this.api.createPod(namespace, runPod(policy, settings));
        closers.push(() => this.api.deletePod(namespace, name));
        await waitForPodStart(
          () => this.api.podPhase(namespace, name),
          { ...this.options.podStart, pollMs: POD_POLL_MS },
          (why) => {
            log.info({ why }, 'run pod waiting');
            policy.onWaiting?.(why);
          },
          this.api.podChanges && ((onChange) => this.api.podChanges!(namespace, name, onChange)),
        );
      }
      const sandbox = new KubernetesSandbox(
        this.api,
        namespace,
        name,
        policy,
        gatewayUrls(gateway.address, registration.key),
        gateway.address.slice(0, gateway.address.lastIndexOf(':')),
        closers,
        () => registration.forget(),
        this.options.snapshots,
        log,
        checkpoint && this.options.checkpoints,
        claim && { snapshots: volumeSnapshots!, claim },
      );
      this.keep(sandbox, closers);
      log.info({ image, warm: warm !== undefined }, 'run pod started');
      if (policy.snapshot) await sandbox.restore(policy.snapshot, mount);
      await mount?.release();
      return sandbox;
    } catch (err) {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      throw err instanceof SandboxUnavailable
        ? err
        : new SandboxUnavailable(`cannot start the run's pod: ${describe(err)}`);
    }
  }

  /** The run's Pod another replica started, for this one adopting the run (pod-reopen.ts). */
  async reopen(policy: SandboxPolicy): Promise<RunSandbox> {
    const { namespace, gateway } = this.options;
    const log = this.options.logger.child({ runId: policy.runId });
    try {
      const { name, key, closers, forget } = await reopenRunPod(
        this.api,
        { namespace, gateway: gateway.server, internalHosts: this.options.internalHosts },
        policy,
        log,
      );
      const sandbox = new KubernetesSandbox(
        this.api,
        namespace,
        name,
        policy,
        gatewayUrls(gateway.address, key),
        gateway.address.slice(0, gateway.address.lastIndexOf(':')),
        closers,
        forget,
        this.options.snapshots,
        log.child({ pod: name }),
      );
      this.keep(sandbox, closers);
      return sandbox;
    } catch (err) {
      throw err instanceof SandboxUnavailable
        ? err
        : new SandboxUnavailable(`cannot reopen the run's pod: ${describe(err)}`);
    }
  }

  /** The runner hands its runs over (SIGTERM): their agents go on in their Pods, for the replicas that adopt them. */
  detach(): void {
    for (const sandbox of this.sandboxes) sandbox.detach();
  }

  private keep(sandbox: KubernetesSandbox, closers: Array<() => Promise<unknown>>): void {
    this.sandboxes.add(sandbox);
    closers.push(async () => this.sandboxes.delete(sandbox));
  }
}

/** Waits for both, then throws the first failure: a closer of the one that succeeded is registered before cleanup. */
async function bothSettled(a: Promise<unknown>, b: Promise<unknown>): Promise<void> {
  for (const r of await Promise.allSettled([a, b])) if (r.status === 'rejected') throw r.reason;
}

/**
 * A failed API call said plainly: an HTTP status names what to fix (403: the runner's RBAC, 422: a spec the API server
 * rejects, 404: a missing namespace), then the API's own message.
 */
function describe(err: unknown): string {
  if (!(err instanceof KubernetesApiError)) return (err as Error).message;
  const hint = API_STATUS_HINTS[err.status];
  return `${hint ? `${hint} ` : ''}(HTTP ${err.status}): ${err.message}`;
}

const API_STATUS_HINTS: Record<number, string> = {
  401: "the API server does not accept the runner's credentials",
  403: "the runner's ServiceAccount lacks the RBAC rights (the Role in k8s/chart/templates/service-account.yaml)",
  404: 'not found',
  409: 'already exists',
  422: 'the API server rejected the object',
};

class KubernetesSandbox implements RunSandbox {
  readonly workspaceDir = POD_WORKSPACE;
  readonly secrets: readonly string[];
  readonly reopenSecret: string;
  startedFrom: string | undefined;
  snapshotFailure: string | undefined;
  readonly restoreCheckpoint?: () => Promise<void>;
  private limitHit: SandboxLimitHit | undefined;
  private readonly live = new Set<PodProcess | PodDurableProcess>();
  /** The run's agent, started durable: `detach` leaves it running in the Pod for whichever replica takes the run. */
  private durable: PodDurableProcess | undefined;
  private readonly wallClock: NodeJS.Timeout;
  private destroyed: Promise<SandboxUsage> | undefined;
  /** Why the Pod went while the run was in it (podLossCause), and the checks asking that after a command ended badly. */
  private lost: string | undefined;
  private readonly lossChecks: Array<Promise<unknown>> = [];

  constructor(
    private readonly api: KubernetesClient,
    private readonly namespace: string,
    private readonly pod: string,
    policy: SandboxPolicy,
    private readonly urls: ReturnType<typeof gatewayUrls>,
    /** The gateway's host: endpoints are reached there directly, not through the egress filter. */
    private readonly gatewayHost: string,
    private readonly closers: Array<() => Promise<unknown>>,
    /** Drops the run from this replica's gateway only (`GatewayRegistration.forget`). */
    private readonly forgetRoute: () => void,
    private readonly snapshots: PodSnapshots | undefined,
    private readonly log: Logger,
    /** Set when the Pod mounts the run's checkpoint: restoreCheckpoint then unpacks it there. */
    checkpoints?: PodCheckpoints,
    /** Set when the workspace is a claim: snapshots are then VolumeSnapshots of it (volume-snapshots.ts). */
    private readonly volume?: { snapshots: VolumeSnapshots; claim: WorkspaceClaim },
  ) {
    if (checkpoints)
      this.restoreCheckpoint = () => checkpoints.restore((argv, stdin) => this.housekeeping(argv, stdin));
    this.secrets = [urls.key];
    this.reopenSecret = urls.key;
    this.wallClock = setTimeout(() => {
      this.limitHit = 'timeout';
      // A process already gone cannot be killed; that must not end the runner.
      for (const proc of this.live) void proc.kill().catch(() => undefined);
    }, policy.limits.wallClockMs);
    this.wallClock.unref();
  }

  endpointUrl(name: string): string {
    return this.urls.endpoint(name);
  }

  exec(options: SandboxExecOptions): SandboxProcess {
    return this.track(options.durable ? this.startDurable(options) : this.start(options));
  }

  /** The agent a previous holder of the run started, read on from `from` (pod-durable.ts). */
  attachDurable(from: OutputOffsets): SandboxProcess {
    return this.track(this.startDurable(undefined, from));
  }

  /**
   * The runner lets go of the run (it stops, or another replica took it over): its agent goes on, nothing is killed.
   * Taken over, the run is also no longer served by this replica's gateway nor its route renewed from here; the
   * route, the adopter's now, is left alone. A stopping runner keeps serving until its gateway closes.
   */
  detach(takenOver = false): void {
    this.durable?.detach();
    if (takenOver) this.forgetRoute();
  }

  private startDurable(options: SandboxExecOptions | undefined, from = { stdout: 0, stderr: 0 }) {
    const env = options && { ...options.env, ...proxyEnvironment(this.urls.proxy, this.gatewayHost) };
    this.durable = new PodDurableProcess(
      (argv, io, onStatus) => this.api.exec(this.namespace, this.pod, argv, io, onStatus),
      {
        ...(options && env
          ? { launch: podExecCommand(durableLaunch(options.argv), env, options.cwd ?? POD_WORKSPACE) }
          : {}),
        from,
        stdin: options ? options.stdin === 'pipe' : true,
        killAll: () => this.run(['kill', '-KILL', '-1']).then(() => undefined),
      },
    );
    return this.durable;
  }

  private track(proc: PodProcess | PodDurableProcess): SandboxProcess {
    if (this.limitHit || this.destroyed) void proc.kill();
    this.live.add(proc);
    return reportingLoss(proc, (exit) => {
      this.live.delete(proc);
      // A command that did not end well may have lost its Pod under it: its exit and destroy() say why.
      if (exit.code === 0 || exit.limit || this.destroyed) return undefined;
      const check = podLossCause(this.api, this.namespace, this.pod);
      this.lossChecks.push(check.then((cause) => (this.lost ??= whileInProgress(cause))));
      return check;
    });
  }

  /**
   * A process in the pod, not tracked: exec() tracks the run's own; the sandbox's housekeeping (kill -1, du) runs
   * through here so that killing a run's process, or a destroyed sandbox, does not start yet another tracked (and
   * at once killed) process — that recursed until the stack overflowed and took the runner down on every cancel.
   */
  private start(options: SandboxExecOptions): PodProcess {
    const env = { ...options.env, ...proxyEnvironment(this.urls.proxy, this.gatewayHost) };
    return new PodProcess(
      (command, stdout, stderr, stdin, onStatus) =>
        this.api.exec(this.namespace, this.pod, command, { stdout, stderr, stdin }, onStatus),
      podExecCommand(options.argv, env, options.cwd ?? POD_WORKSPACE),
      options.stdin === 'pipe',
      () => this.limitHit,
      () => this.run(['kill', '-KILL', '-1']).then(() => undefined),
    );
  }

  /**
   * Before anything else runs in the Pod: its workspace from the team's snapshot, when the runner keeps one — from
   * the Pod's own mount of it when it has one (`mounted`), else streamed.
   */
  async restore(ref: SnapshotRef, mounted: SnapshotMount | undefined): Promise<void> {
    // A claim cloned from the snapshot holds the workspace already: the storage restored it, nothing to unpack.
    if (this.volume) {
      this.startedFrom = this.volume.claim.startedFrom;
      if (this.startedFrom)
        this.log.info({ startedFrom: this.startedFrom, cloned: true }, 'snapshot restore');
      return;
    }
    const started = Date.now();
    const restored = await this.snapshots?.restore(
      ref,
      (argv, stdin) => this.housekeeping(argv, stdin),
      mounted,
    );
    this.startedFrom = restored?.startedFrom;
    this.snapshotFailure = restored?.failure;
    if (restored?.startedFrom || restored?.failure)
      this.log.info(
        { ...restored, mounted: mounted !== undefined, ms: Date.now() - started },
        'snapshot restore',
      );
  }

  /**
   * Keeps the workspace as the snapshot `ref` once setup has ended: what setup left running is killed first, so the
   * archive is of a workspace nothing writes to; the archive then lives in the runner's store, out of every Pod's
   * reach, so nothing this run does later reaches it.
   */
  get keepsSnapshots(): boolean {
    return this.snapshots !== undefined || this.volume !== undefined;
  }

  async captureSnapshot(ref: SnapshotRef): Promise<string | undefined> {
    const { snapshots, volume } = this;
    if ((!snapshots && !volume) || this.startedFrom) return undefined;
    const started = Date.now();
    await this.run(['kill', '-KILL', '-1']);
    // On a claim, `sync` puts what setup wrote on the volume and the storage cuts the snapshot: no archive, no bytes
    // through exec or the API server.
    const made = volume
      ? await this.run(['sync']).then(() => volume.snapshots.capture(ref, volume.claim.name))
      : await snapshots!.capture(ref, (argv, stdin) => this.housekeeping(argv, stdin));
    this.log.info({ made, cloned: volume !== undefined, ms: Date.now() - started }, 'snapshot capture');
    return made;
  }

  async dropSnapshot(ref: SnapshotRef): Promise<void> {
    await (this.volume?.snapshots ?? this.snapshots)?.drop(ref);
  }

  /** A command of the sandbox's own (archives, disk use, signals), with only a PATH. */
  private housekeeping(argv: [string, ...string[]], stdin: 'pipe' | 'ignore' = 'ignore'): PodProcess {
    return this.start({ argv, env: { PATH: '/usr/local/bin:/usr/bin:/bin' }, stdin });
  }

  /** Output of a short command in the pod (disk use, signals), or '' when it fails. */
  private async run(argv: [string, ...string[]]): Promise<string> {
    const proc = this.housekeeping(argv);
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.resume();
    await proc.exited;
    return out;
  }

  destroy(): Promise<SandboxUsage> {
    this.destroyed ??= (async () => {
      clearTimeout(this.wallClock);
      await Promise.all([...this.live].map((p) => p.kill()));
      const diskBytes =
        Number((await this.run(['du', '-sb', POD_WORKSPACE]).catch(() => '')).split('\t')[0]) || 0;
      await Promise.all(this.lossChecks);
      for (const close of this.closers.reverse()) await close().catch(() => undefined);
      return {
        diskBytes,
        ...(this.limitHit ? { limit: this.limitHit } : {}),
        ...(this.lost ? { lost: this.lost } : {}),
      };
    })();
    return this.destroyed;
  }
}

type ExecStart = (
  command: string[],
  stdout: Writable,
  stderr: Writable,
  stdin: Readable | null,
  onStatus: (status: ExecStatus) => void,
) => Promise<{ close(): void }>;

class PodProcess implements SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly exited: Promise<SandboxExit>;
  private socket: Promise<{ close(): void } | undefined>;
  private settle!: (exit: SandboxExit) => void;

  constructor(
    start: ExecStart,
    command: string[],
    withStdin: boolean,
    limit: () => SandboxLimitHit | undefined,
    private readonly killAll: () => Promise<void>,
  ) {
    const stdin = withStdin ? new PassThrough() : null;
    this.stdin = stdin;
    this.exited = new Promise((resolve) => (this.settle = resolve));
    const finish = (code: number | null) => {
      const hit = limit();
      this.stdout.end();
      this.stderr.end();
      this.settle({ code, signal: null, ...(hit ? { limit: hit } : {}) });
    };
    this.socket = start(command, this.stdout, this.stderr, stdin, (status) => {
      // The exec API reports the exit code as a cause of a non-Success status.
      const code =
        status.status === 'Success'
          ? 0
          : Number(status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message ?? 1);
      finish(code);
    }).catch((err: unknown) => {
      this.stderr.write(`sandbox: exec failed: ${(err as Error).message}\n`);
      finish(null);
      return undefined;
    });
  }

  /**
   * Closing the exec stream does not stop the process in the container: every process of the run's uid but the pod's
   * keeper (pid 1, which `kill -1` spares) is killed, so on this backend killing one command kills the others too.
   */
  async kill(): Promise<void> {
    await this.killAll().catch(() => undefined);
    try {
      (await this.socket)?.close();
    } catch {
      // already closed
    }
    this.settle({ code: null, signal: 'SIGKILL' });
    this.stdout.end();
    this.stderr.end();
  }
}
