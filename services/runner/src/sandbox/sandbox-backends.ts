import path from 'node:path';
import type { Logger } from '@conveyor/logger';
import { BwrapBackend } from './bwrap-backend';
import type { SandboxBackend } from './run-sandbox';
import type { SandboxSettings } from './sandbox-config';
import { UnsandboxedBackend } from './unsandboxed-backend';

/** The repository's node_modules, where the agent CLIs live: visible read-only inside local sandboxes. */
const AGENT_CLIS = path.resolve(__dirname, '../../../../node_modules');

/** Builds the configured backend and verifies it can isolate runs here before the runner takes any job. */
export async function createSandboxBackend(config: SandboxSettings, logger: Logger): Promise<SandboxBackend> {
  const log = logger.child({ component: 'sandbox' });
  let backend: SandboxBackend;
  switch (config.RUN_SANDBOX) {
    case 'bubblewrap':
      backend = new BwrapBackend({
        readOnlyPaths: [...new Set([AGENT_CLIS, ...toolchainPaths(), ...config.SANDBOX_READONLY_PATHS])],
        internalHosts: config.SANDBOX_INTERNAL_HOSTS,
        stateDir: config.SANDBOX_STATE_DIR,
        monitorIntervalMs: config.SANDBOX_MONITOR_INTERVAL_MS,
        logger: log,
      });
      break;
    case 'kubernetes': {
      // Loaded only here: the Kubernetes client is an ES module the local backends never need.
      const { KubernetesBackend } = await import('./kubernetes-backend');
      backend = new KubernetesBackend({
        namespace: config.SANDBOX_K8S_NAMESPACE,
        podIp: config.SANDBOX_K8S_POD_IP,
        ...(config.SANDBOX_K8S_POD_NAME && config.SANDBOX_K8S_POD_UID
          ? { runnerPod: { name: config.SANDBOX_K8S_POD_NAME, uid: config.SANDBOX_K8S_POD_UID } }
          : {}),
        runnerPodLabels: config.SANDBOX_K8S_RUNNER_LABELS,
        defaultImage: config.SANDBOX_K8S_DEFAULT_IMAGE,
        cpu: config.SANDBOX_K8S_CPU,
        internalHosts: config.SANDBOX_INTERNAL_HOSTS,
        startTimeoutMs: config.SANDBOX_K8S_START_TIMEOUT_MS,
        logger: log,
      });
      break;
    }
    case 'none':
      backend = new UnsandboxedBackend(log);
      break;
  }
  await backend.check();
  return backend;
}

/** Node's installation when it is not under /usr (nvm, /opt): the runs' `node` must resolve inside too. */
function toolchainPaths(): string[] {
  const prefix = path.dirname(path.dirname(process.execPath));
  return prefix === '/usr' || prefix.startsWith('/usr/') ? [] : [prefix];
}
