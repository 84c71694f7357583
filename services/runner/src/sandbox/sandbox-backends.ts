import { lookup } from 'node:dns/promises';
import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { BwrapBackend } from './bwrap/bwrap-backend';
import { startHelperAndDropRoot } from './bwrap/privileged/start-helper';
import { SandboxUnavailable, type SandboxBackend } from './run-sandbox';
import { sandboxLimits, type SandboxSettings } from './sandbox-config';
import { SnapshotStore, type SnapshotLimits } from './snapshot-store';
import { UnsandboxedBackend } from './unsandboxed-backend';
import type { PodCpu, PodPlacement } from './kubernetes/kubernetes-objects';

/** How long a runner replica stays named the holder of its runs without renewing (run-routes.ts), and how often it renews. */
const RUN_ROUTE_TTL_MS = 30_000;
const RUN_ROUTE_RENEW_MS = 10_000;
/** Between two reads of a starting warm Pod's status (a watch wakes the wait sooner). */
const WARM_POD_POLL_MS = 1000;

/** The repository's node_modules, where the agent CLIs live: visible read-only inside local sandboxes. */
const AGENT_CLIS = path.resolve(__dirname, '../../../../node_modules');

/**
 * Builds the configured backend and verifies it can isolate runs here before the runner takes any job. With
 * bubblewrap this is where the process stops being root (docs/sandbox.md): the caller reads its TLS keys before.
 * `onLost`: the backend can isolate nothing more (its runs end); the process stops next, exiting non-zero.
 * `redis`: where runner replicas tell each other which holds which run (Kubernetes); without it, the process is alone.
 */
export async function createSandboxBackend(
  config: SandboxSettings & { WORKSPACE_ROOT: string },
  logger: Logger,
  onLost: (cause: SandboxUnavailable) => void,
  redis?: Redis,
): Promise<SandboxBackend> {
  const log = logger.child({ component: 'sandbox' });
  let backend: SandboxBackend;
  switch (config.RUN_SANDBOX) {
    case 'bubblewrap': {
      const readOnlyPaths = [...new Set([AGENT_CLIS, ...toolchainPaths(), ...config.SANDBOX_READONLY_PATHS])];
      // Where the runner stops being root: only the forked helper keeps privileges.
      const helper = await startHelperAndDropRoot(
        {
          workspaceRoot: config.WORKSPACE_ROOT,
          stateDir: config.SANDBOX_STATE_DIR,
          readOnlyPaths,
          snapshots: snapshotLimits(config),
        },
        config.SANDBOX_RUNNER_USER,
        (reason) => {
          // This process can isolate nothing more: its runs end; what is left of their agents, the next runner
          // process's helper ends (`releaseLeftovers`).
          log.fatal({ reason }, 'the privileged sandbox helper is gone; stopping');
          onLost(
            new SandboxUnavailable(
              `The runner's privileged sandbox helper was lost (${reason}); the run cannot go on without it`,
            ),
          );
          process.exitCode = 1;
          process.kill(process.pid, 'SIGTERM');
        },
      );
      backend = new BwrapBackend({
        helper,
        readOnlyPaths,
        internalHosts: config.SANDBOX_INTERNAL_HOSTS,
        stateDir: config.SANDBOX_STATE_DIR,
        workspaceRoot: config.WORKSPACE_ROOT,
        monitorIntervalMs: config.SANDBOX_MONITOR_INTERVAL_MS,
        logger: log,
      });
      break;
    }
    case 'kubernetes': {
      // Loaded only here: the Kubernetes client is an ES module the local backends never need.
      const [
        { KubernetesBackend },
        { clusterClient, inClusterConfig },
        { PodSnapshots },
        { PodCheckpoints },
        { RunGateway },
        routes,
        { WarmPods },
        { VolumeSnapshots },
        { volumeSnapshotClient },
      ] = await Promise.all([
        import('./kubernetes/kubernetes-backend'),
        import('./kubernetes/kubernetes-client'),
        import('./kubernetes/pod-snapshots'),
        import('./kubernetes/pod-checkpoints'),
        import('./kubernetes/run-gateway'),
        import('./kubernetes/run-routes'),
        import('./kubernetes/warm-pods'),
        import('./kubernetes/volume-snapshots'),
        import('./kubernetes/volume-snapshot-client'),
      ]);
      const gatewayPort = config.SANDBOX_K8S_GATEWAY_PORT;
      let service: string;
      try {
        ({ address: service } = await lookup(config.SANDBOX_K8S_GATEWAY_SERVICE));
      } catch (err) {
        throw new SandboxUnavailable(
          `cannot resolve the run gateway's Service ${config.SANDBOX_K8S_GATEWAY_SERVICE}: ${(err as Error).message}`,
        );
      }
      const gateway = await RunGateway.listen(
        { host: '0.0.0.0', port: gatewayPort },
        redis
          ? routes.redisRunRoutes(redis, `${config.SANDBOX_K8S_POD_IP}:${gatewayPort}`, RUN_ROUTE_TTL_MS)
          : routes.LONE_PROCESS_ROUTES,
        RUN_ROUTE_RENEW_MS,
        log.child({ component: 'run-gateway' }),
      );
      const runnerPod =
        config.SANDBOX_K8S_POD_NAME && config.SANDBOX_K8S_POD_UID
          ? { name: config.SANDBOX_K8S_POD_NAME, uid: config.SANDBOX_K8S_POD_UID }
          : undefined;
      const podStart = {
        startTimeoutMs: config.SANDBOX_K8S_START_TIMEOUT_MS,
        unschedulableTimeoutMs: config.SANDBOX_K8S_UNSCHEDULABLE_TIMEOUT_MS,
      };
      const kubeConfig = inClusterConfig();
      const api = clusterClient(kubeConfig);
      backend = new KubernetesBackend(
        {
          namespace: config.SANDBOX_K8S_NAMESPACE,
          gateway: { server: gateway, address: `${service}:${gatewayPort}` },
          ...(runnerPod ? { runnerPod } : {}),
          runnerPodLabels: config.SANDBOX_K8S_RUNNER_LABELS,
          defaultImage: config.SANDBOX_K8S_DEFAULT_IMAGE,
          cpu: podCpu(config),
          placement: podPlacement(config),
          internalHosts: config.SANDBOX_INTERNAL_HOSTS,
          podStart,
          // A run whose workspace is a claim needs a Pod of its own: no pool of warm Pods then.
          ...(config.SANDBOX_K8S_WARM_PODS.size > 0 && !config.SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS
            ? {
                warmPods: new WarmPods(
                  {
                    namespace: config.SANDBOX_K8S_NAMESPACE,
                    images: config.SANDBOX_K8S_WARM_PODS,
                    demandWindowMs: config.SANDBOX_K8S_WARM_DEMAND_WINDOW_MS,
                    maxIdleMs: config.SANDBOX_K8S_WARM_MAX_IDLE_MS,
                    streamMaxBytes: config.SANDBOX_K8S_WARM_STREAM_MAX_MB * 1024 * 1024,
                    limits: sandboxLimits(config),
                    pod: {
                      namespace: config.SANDBOX_K8S_NAMESPACE,
                      ...(runnerPod ? { owner: runnerPod } : {}),
                      runnerPodLabels: config.SANDBOX_K8S_RUNNER_LABELS,
                      gatewayPort,
                      cpu: podCpu(config),
                      placement: podPlacement(config),
                    },
                    podStart: { ...podStart, pollMs: WARM_POD_POLL_MS },
                    logger: log.child({ component: 'warm-pods' }),
                  },
                  api,
                ),
              }
            : {}),
          // The archives live on the runner's volume; a run Pod mounts only its own team's, when that is a claim.
          snapshots: new PodSnapshots(
            new SnapshotStore(config.WORKSPACE_ROOT, snapshotLimits(config), 'tar'),
            config.SANDBOX_K8S_SNAPSHOT_CLAIM || undefined,
          ),
          // Each run's last turn beside them, when any replica (and the run's next Pod) can mount the claim.
          ...(config.SANDBOX_K8S_SNAPSHOT_CLAIM
            ? { checkpoints: new PodCheckpoints(config.WORKSPACE_ROOT, config.SANDBOX_K8S_SNAPSHOT_CLAIM) }
            : {}),
          // Where a CSI driver cuts snapshots, the storage clones a run's workspace instead (volume-snapshots.ts).
          ...(config.SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS
            ? {
                volumeSnapshots: new VolumeSnapshots(volumeSnapshotClient(kubeConfig), {
                  namespace: config.SANDBOX_K8S_NAMESPACE,
                  snapshotClass: config.SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS,
                  ...(runnerPod ? { owner: runnerPod } : {}),
                  ...(config.SANDBOX_K8S_WORKSPACE_STORAGE_CLASS
                    ? { storageClass: config.SANDBOX_K8S_WORKSPACE_STORAGE_CLASS }
                    : {}),
                }),
              }
            : {}),
          logger: log,
        },
        api,
      );
      break;
    }
    case 'none':
      backend = new UnsandboxedBackend(
        log,
        config.WORKSPACE_ROOT,
        config.RUN_SANDBOX_NONE_ACKNOWLEDGED !== '',
      );
      break;
  }
  await backend.check();
  return backend;
}

/** Where run Pods go, warm and cold alike. */
function podPlacement(config: SandboxSettings): PodPlacement {
  return {
    nodeSelector: config.SANDBOX_K8S_NODE_SELECTOR,
    tolerations: config.SANDBOX_K8S_TOLERATIONS,
    priorityClassName: config.SANDBOX_K8S_PRIORITY_CLASS,
  };
}

/** The run Pods' CPU: the limit defaults to the request (SANDBOX_K8S_CPU_LIMIT). */
function podCpu(config: SandboxSettings): PodCpu {
  return { request: config.SANDBOX_K8S_CPU, limit: config.SANDBOX_K8S_CPU_LIMIT || config.SANDBOX_K8S_CPU };
}

function snapshotLimits(config: SandboxSettings): SnapshotLimits {
  return {
    maxAgeMs: Math.round(config.SNAPSHOT_MAX_AGE_HOURS * 3600_000),
    maxBytes: config.SNAPSHOT_MAX_MB * 1024 * 1024,
  };
}

/** Node's installation when it is not under /usr (nvm, /opt): the runs' `node` must resolve inside too. */
function toolchainPaths(): string[] {
  const prefix = path.dirname(path.dirname(process.execPath));
  return prefix === '/usr' || prefix.startsWith('/usr/') ? [] : [prefix];
}
