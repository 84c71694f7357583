import { KubernetesApiError } from '../sandbox/kubernetes/kubernetes-api';
import type { VolumeSnapshotClient, WorkspaceClaim } from '../sandbox/kubernetes/volume-snapshots';

/**
 * The snapshot API of one namespace as the API server answers it: 409 for a name taken, 404 for a missing object, and a
 * snapshot ready only once the (scripted) CSI driver says so.
 */
export function fakeVolumeSnapshotApi() {
  const snapshots = new Map<
    string,
    { labels: Record<string, string>; source: string; readyToUse: boolean }
  >();
  const claims = new Map<string, WorkspaceClaim['body']>();
  const api: VolumeSnapshotClient = {
    createVolumeSnapshot(_ns, body) {
      if (snapshots.has(body.metadata.name)) return Promise.reject(new KubernetesApiError(409, 'exists'));
      snapshots.set(body.metadata.name, {
        labels: body.metadata.labels,
        source: body.spec.source.persistentVolumeClaimName,
        readyToUse: false,
      });
      return Promise.resolve();
    },
    readVolumeSnapshot: (_ns, name) => {
      const found = snapshots.get(name);
      return Promise.resolve(found && { readyToUse: found.readyToUse, labels: found.labels });
    },
    deleteVolumeSnapshot(_ns, name) {
      if (!snapshots.delete(name)) return Promise.reject(new KubernetesApiError(404, 'not found'));
      return Promise.resolve();
    },
    createPersistentVolumeClaim(_ns, body) {
      claims.set(body.metadata.name, body);
      return Promise.resolve();
    },
    deletePersistentVolumeClaim(_ns, name) {
      if (!claims.delete(name)) return Promise.reject(new KubernetesApiError(404, 'not found'));
      return Promise.resolve();
    },
  };
  const ready = () => snapshots.forEach((s) => (s.readyToUse = true));
  return { api, snapshots, claims, ready };
}
