import * as k8s from '@kubernetes/client-node';
import { KubernetesApiError, type KubernetesClient } from './kubernetes-api';

/** The API's own message of a failed call: a Status object's `message`, else the error's. */
function apiError(err: unknown): unknown {
  if (!(err instanceof k8s.ApiException)) return err;
  const body: unknown = typeof err.body === 'string' ? safeJson(err.body) : err.body;
  const message =
    body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : err.message;
  return new KubernetesApiError(err.code, message);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const mapErrors = <T>(call: Promise<T>): Promise<T> =>
  call.catch((err: unknown) => {
    throw apiError(err);
  });

/** The KubernetesClient of @kubernetes/client-node, configured in-cluster (the runner pod's ServiceAccount). */
export function clusterClient(config: k8s.KubeConfig = inClusterConfig()): KubernetesClient {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const networking = config.makeApiClient(k8s.NetworkingV1Api);
  const execApi = new k8s.Exec(config);
  return {
    probe: (namespace) =>
      mapErrors(
        (async () => {
          await core.listNamespacedPod({ namespace, limit: 1 });
          await networking.listNamespacedNetworkPolicy({ namespace, limit: 1 });
        })(),
      ),
    createNetworkPolicy: (namespace, body) =>
      mapErrors(networking.createNamespacedNetworkPolicy({ namespace, body }).then(() => undefined)),
    deleteNetworkPolicy: (namespace, name) =>
      mapErrors(networking.deleteNamespacedNetworkPolicy({ name, namespace }).then(() => undefined)),
    createPod: (namespace, body) =>
      mapErrors(core.createNamespacedPod({ namespace, body: body as k8s.V1Pod }).then(() => undefined)),
    deletePod: (namespace, name) =>
      mapErrors(core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).then(() => undefined)),
    podPhase: (namespace, name) =>
      mapErrors(
        core.readNamespacedPod({ name, namespace }).then((pod) => ({
          ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
          ...(pod.status?.reason ? { reason: pod.status.reason } : {}),
        })),
      ),
    exec: (namespace, pod, command, { stdout, stderr, stdin }, onStatus) =>
      mapErrors(execApi.exec(namespace, pod, 'run', command, stdout, stderr, stdin, false, onStatus)),
  };
}

function inClusterConfig(): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  config.loadFromDefault();
  return config;
}
