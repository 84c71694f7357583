import * as k8s from '@kubernetes/client-node';
import { KubernetesApiError } from './kubernetes-api';
import { mapErrors } from './kubernetes-client';
import type { VolumeSnapshotClient } from './volume-snapshots';

const GROUP = 'snapshot.storage.k8s.io';
const VERSION = 'v1';
const PLURAL = 'volumesnapshots';

/** The VolumeSnapshotClient of @kubernetes/client-node: VolumeSnapshots are custom objects of external-snapshotter. */
export function volumeSnapshotClient(config: k8s.KubeConfig): VolumeSnapshotClient {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const custom = config.makeApiClient(k8s.CustomObjectsApi);
  return {
    createVolumeSnapshot: (namespace, body) =>
      mapErrors(
        custom
          .createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, body })
          .then(() => undefined),
      ),
    readVolumeSnapshot: (namespace, name) =>
      mapErrors(
        custom
          .getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name })
          .then(
            (found: {
              metadata?: { labels?: Record<string, string> };
              status?: { readyToUse?: boolean };
            }) => ({
              readyToUse: found.status?.readyToUse === true,
              labels: found.metadata?.labels ?? {},
            }),
          ),
      ).catch((err: unknown) => {
        if (err instanceof KubernetesApiError && err.status === 404) return undefined;
        throw err;
      }),
    deleteVolumeSnapshot: (namespace, name) =>
      mapErrors(
        custom
          .deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name })
          .then(() => undefined),
      ),
    createPersistentVolumeClaim: (namespace, body) =>
      mapErrors(
        core
          .createNamespacedPersistentVolumeClaim({ namespace, body: body as k8s.V1PersistentVolumeClaim })
          .then(() => undefined),
      ),
    deletePersistentVolumeClaim: (namespace, name) =>
      mapErrors(core.deleteNamespacedPersistentVolumeClaim({ name, namespace }).then(() => undefined)),
  };
}
