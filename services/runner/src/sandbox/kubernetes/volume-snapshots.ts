import { createHash } from 'node:crypto';
import type { SnapshotRef } from '../run-sandbox';
import { KubernetesApiError } from './kubernetes-api';

const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
/** Label naming the team (a hash: team IDs need not be label-safe) on every VolumeSnapshot and workspace claim. */
export const TEAM_LABEL = 'conveyor.dev/team';

/** What the runner reads of a VolumeSnapshot: whether the CSI driver finished cutting it, and its labels. */
export interface VolumeSnapshotStatus {
  readyToUse: boolean;
  labels: Record<string, string>;
}

/**
 * What CSI snapshot restore needs of the Kubernetes API (the snapshot.storage.k8s.io/v1 CRDs of external-snapshotter
 * and core PersistentVolumeClaims). Failures with an HTTP status reject with KubernetesApiError.
 */
export interface VolumeSnapshotClient {
  createVolumeSnapshot(namespace: string, body: ReturnType<VolumeSnapshots['snapshotBody']>): Promise<void>;
  /** undefined when there is no such VolumeSnapshot. */
  readVolumeSnapshot(namespace: string, name: string): Promise<VolumeSnapshotStatus | undefined>;
  deleteVolumeSnapshot(namespace: string, name: string): Promise<void>;
  createPersistentVolumeClaim(namespace: string, body: WorkspaceClaim['body']): Promise<void>;
  deletePersistentVolumeClaim(namespace: string, name: string): Promise<void>;
}

export interface VolumeSnapshotSettings {
  namespace: string;
  /** SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS: the VolumeSnapshotClass captures are cut with. */
  snapshotClass: string;
  /** SANDBOX_K8S_WORKSPACE_STORAGE_CLASS: the StorageClass of the run's workspace claim; absent, the default one. */
  storageClass?: string;
  /** The runner pod: owner of each workspace claim, so a runner that goes without cleaning up leaves none behind. */
  owner?: { name: string; uid: string };
}

/** A run's workspace claim, and the snapshot it is cloned from when there is one. */
export interface WorkspaceClaim {
  name: string;
  startedFrom?: string;
  body: {
    apiVersion: 'v1';
    kind: 'PersistentVolumeClaim';
    metadata: {
      name: string;
      labels: Record<string, string>;
      ownerReferences?: Array<{ apiVersion: 'v1'; kind: 'Pod'; name: string; uid: string }>;
    };
    spec: {
      storageClassName?: string;
      accessModes: ['ReadWriteOnce'];
      resources: { requests: { storage: string } };
      dataSource?: { apiGroup: typeof SNAPSHOT_GROUP; kind: 'VolumeSnapshot'; name: string };
    };
  };
}

/**
 * Environment snapshots as CSI VolumeSnapshots (docs/sandbox.md): a run's workspace is a PersistentVolumeClaim of a
 * CSI StorageClass; capture cuts a VolumeSnapshot of the setup run's claim and a later run's claim names that snapshot
 * as its `dataSource`, so the storage clones it — no exec, no bytes through the runner or the API server.
 *
 * Tenancy: a snapshot's name is derived from its team and key together, and its team label is checked again before it
 * becomes a claim's source, so a team's snapshot only ever becomes that team's workspace — whatever another team's
 * environment hashes to, and whoever else made an object of that name in the namespace.
 */
export class VolumeSnapshots {
  constructor(
    private readonly api: VolumeSnapshotClient,
    private readonly settings: VolumeSnapshotSettings,
  ) {}

  /** The claim for the run's Pod `pod`, cloned from the team's snapshot `ref` when one is ready. */
  async workspaceClaim(pod: string, diskBytes: number, ref?: SnapshotRef): Promise<WorkspaceClaim> {
    const source = ref && (await this.readySnapshot(ref));
    const name = `${pod}-workspace`;
    const { owner } = this.settings;
    return {
      name,
      ...(source ? { startedFrom: source } : {}),
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          labels: ref ? { [TEAM_LABEL]: teamLabel(ref.teamId) } : {},
          ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', ...owner }] } : {}),
        },
        spec: {
          ...(this.settings.storageClass ? { storageClassName: this.settings.storageClass } : {}),
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: String(diskBytes) } },
          ...(source
            ? { dataSource: { apiGroup: SNAPSHOT_GROUP, kind: 'VolumeSnapshot', name: source } }
            : {}),
        },
      },
    };
  }

  /** Creates the run's workspace claim (before its Pod, which mounts it). */
  async createClaim(claim: WorkspaceClaim): Promise<void> {
    await this.api.createPersistentVolumeClaim(this.settings.namespace, claim.body);
  }

  deleteClaim(name: string): Promise<void> {
    return ignoreMissing(this.api.deletePersistentVolumeClaim(this.settings.namespace, name));
  }

  /**
   * Cuts the snapshot `ref` of the setup run's workspace claim; undefined when one exists already (another run made
   * it first). The snapshot is usable once the driver reports it ready; until then runs set up from scratch.
   */
  async capture(ref: SnapshotRef, claim: string): Promise<string | undefined> {
    try {
      await this.api.createVolumeSnapshot(this.settings.namespace, this.snapshotBody(ref, claim));
      return snapshotName(ref);
    } catch (err) {
      if (err instanceof KubernetesApiError && err.status === 409) return undefined;
      throw err;
    }
  }

  drop(ref: SnapshotRef): Promise<void> {
    return ignoreMissing(this.api.deleteVolumeSnapshot(this.settings.namespace, snapshotName(ref)));
  }

  snapshotBody(ref: SnapshotRef, claim: string) {
    return {
      apiVersion: `${SNAPSHOT_GROUP}/v1` as const,
      kind: 'VolumeSnapshot' as const,
      metadata: { name: snapshotName(ref), labels: { [TEAM_LABEL]: teamLabel(ref.teamId) } },
      spec: {
        volumeSnapshotClassName: this.settings.snapshotClass,
        source: { persistentVolumeClaimName: claim },
      },
    };
  }

  /** The name of the team's ready snapshot `ref`, if there is one and it is labelled as that team's. */
  private async readySnapshot(ref: SnapshotRef): Promise<string | undefined> {
    const name = snapshotName(ref);
    const found = await this.api.readVolumeSnapshot(this.settings.namespace, name);
    if (!found?.readyToUse || found.labels[TEAM_LABEL] !== teamLabel(ref.teamId)) return undefined;
    return name;
  }
}

/** `env-` and a hash of team and key: a DNS label, and never the same for two teams. */
export function snapshotName(ref: SnapshotRef): string {
  return `env-${hash(`${ref.teamId}\0${ref.key}`).slice(0, 40)}`;
}

function teamLabel(teamId: string): string {
  return hash(teamId).slice(0, 40);
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function ignoreMissing(call: Promise<void>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof KubernetesApiError && err.status === 404)) throw err;
  }
}
