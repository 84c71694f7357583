import { PassThrough, type Readable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { KubernetesApiError, type KubernetesClient, type ListedObject } from './kubernetes-api';

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

function listed({ metadata }: { metadata?: k8s.V1ObjectMeta }): ListedObject {
  return {
    name: metadata?.name ?? '',
    labels: metadata?.labels ?? {},
    createdAt: metadata?.creationTimestamp ? new Date(metadata.creationTimestamp).getTime() : 0,
    deleting: metadata?.deletionTimestamp !== undefined,
  };
}

export const mapErrors = <T>(call: Promise<T>): Promise<T> =>
  call.catch((err: unknown) => {
    throw apiError(err);
  });

/** The KubernetesClient of @kubernetes/client-node, configured in-cluster (the runner pod's ServiceAccount). */
export function clusterClient(config: k8s.KubeConfig = inClusterConfig()): KubernetesClient {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const networking = config.makeApiClient(k8s.NetworkingV1Api);
  const execApi = new k8s.Exec(config);
  const watch = new k8s.Watch(config);
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
    listPods: (namespace, labelSelector) =>
      mapErrors(core.listNamespacedPod({ namespace, labelSelector }).then(({ items }) => items.map(listed))),
    listNetworkPolicies: (namespace, labelSelector) =>
      mapErrors(
        networking
          .listNamespacedNetworkPolicy({ namespace, labelSelector })
          .then(({ items }) => items.map(listed)),
      ),
    patchPod: (namespace, name, body) =>
      mapErrors(
        core
          .patchNamespacedPod(
            { name, namespace, body },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
          )
          .then(() => undefined),
      ),
    podPhase: (namespace, name) =>
      mapErrors(
        core.readNamespacedPod({ name, namespace }).then((pod) => {
          const scheduling = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
          const unschedulable =
            scheduling?.status === 'False' && scheduling.reason === 'Unschedulable'
              ? (scheduling.message ?? 'Unschedulable')
              : undefined;
          return {
            ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
            ...(pod.status?.reason ? { reason: pod.status.reason } : {}),
            ...(unschedulable ? { unschedulable } : {}),
          };
        }),
      ),
    podChanges: async (namespace, name, onChange) => {
      const watching = await watch.watch(
        `/api/v1/namespaces/${namespace}/pods`,
        { fieldSelector: `metadata.name=${name}` },
        () => onChange(),
        () => undefined,
      );
      return () => watching.abort();
    },
    exec: (namespace, pod, command, { stdout, stderr, stdin }, onStatus) =>
      mapErrors(
        (async () => {
          const wire = stdin ? new PassThrough() : null;
          const socket = await execApi.exec(
            namespace,
            pod,
            'run',
            command,
            stdout,
            stderr,
            wire,
            false,
            onStatus,
          );
          if (stdin && wire) void paced(stdin, wire, socket);
          // A stream that closes without the exec's status (its Pod deleted, the connection cut) still ends the
          // process: without this its run would wait for its wall-clock limit. After a status, the end is already had.
          socket.once('close', () => onStatus({ status: 'Closed' }));
          return socket;
        })(),
      ),
    podEnd: (namespace, name) =>
      mapErrors(
        core.readNamespacedPod({ name, namespace }).then((pod) => ({
          deleting: Boolean(pod.metadata?.deletionTimestamp),
          ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
          ...(pod.status?.reason ? { reason: pod.status.reason } : {}),
          ...(pod.status?.message ? { message: pod.status.message } : {}),
        })),
      ),
  };
}

type ExecSocket = Awaited<ReturnType<k8s.Exec['exec']>>;

/** Bytes of stdin the exec websocket may hold unsent before the copy waits. */
const STDIN_HIGH_WATER = 4 * 1024 * 1024;

/**
 * Copies stdin into the exec stream no faster than the socket sends it: the client writes whatever stdin emits
 * straight to the websocket, so a snapshot's archive would otherwise sit whole in the runner's memory. The end of
 * stdin reaches the process as EOF (the v5 exec protocol, Kubernetes 1.30 and later).
 */
async function paced(from: Readable, to: PassThrough, socket: ExecSocket): Promise<void> {
  try {
    for await (const chunk of from) {
      to.write(chunk);
      while (socket.bufferedAmount > STDIN_HIGH_WATER && socket.readyState === socket.OPEN)
        await new Promise((r) => setTimeout(r, 10));
      if (socket.readyState !== socket.OPEN) break;
    }
  } catch {
    // stdin failed: the process sees its end
  }
  to.end();
}

export function inClusterConfig(): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  config.loadFromDefault();
  return config;
}
