import type { Readable, Writable } from 'node:stream';
import type { runNetworkPolicy, runPod } from './kubernetes-objects';
import type { warmPodsPolicy } from './warm-pods';

/** How an exec ended, as the API reports it: `Success`, or `Failure` with the exit code among the causes. */
export interface ExecStatus {
  status?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

/** What the runner reads of a run's Pod while it starts. */
export interface PodStatus {
  phase?: string;
  reason?: string;
  /** The scheduler's message while it cannot place the Pod (condition PodScheduled False, reason Unschedulable). */
  unschedulable?: string;
}

/** What claiming a warm Pod changes: its labels, and its deadline cut to the run's own wall clock. */
export interface PodPatch {
  metadata: { labels: Record<string, string> };
  spec: { activeDeadlineSeconds: number };
}

/** What the orphan reconciler reads of a listed Pod or NetworkPolicy (orphan-reconciler.ts). */
export interface ListedObject {
  name: string;
  labels: Record<string, string>;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Set once the object is being deleted. */
  deleting: boolean;
}

/** A Kubernetes API call that failed with an HTTP status (403: RBAC, 404: no such object, 422: rejected spec…). */
export class KubernetesApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What the Pod backend needs of the Kubernetes API, and nothing else: the port KubernetesBackend is written against
 * (its unit tests fake it; tests/kubernetes runs it on a real cluster). Failures with an HTTP status reject with
 * KubernetesApiError.
 */
export interface KubernetesClient {
  /** Reads one Pod and one NetworkPolicy of the namespace: whether the runner may use them at all. */
  probe(namespace: string): Promise<void>;
  createNetworkPolicy(
    namespace: string,
    body: ReturnType<typeof runNetworkPolicy> | ReturnType<typeof warmPodsPolicy>,
  ): Promise<void>;
  deleteNetworkPolicy(namespace: string, name: string): Promise<void>;
  createPod(namespace: string, body: ReturnType<typeof runPod>): Promise<void>;
  deletePod(namespace: string, name: string): Promise<void>;
  /** The namespace's Pods matching a label selector (`a=b,c`). */
  listPods(namespace: string, labelSelector: string): Promise<ListedObject[]>;
  /** The namespace's NetworkPolicies matching a label selector. */
  listNetworkPolicies(namespace: string, labelSelector: string): Promise<ListedObject[]>;
  /** Merges `patch` into the Pod (a JSON merge patch): how a warm Pod is claimed (warm-pods.ts). */
  patchPod(namespace: string, name: string, patch: PodPatch): Promise<void>;
  podPhase(namespace: string, name: string): Promise<PodStatus>;
  /**
   * Calls `onChange` whenever the Pod changes (a watch), until the returned stop is called; a watch that fails or ends
   * just stops calling. Optional: without it, a starting Pod is polled alone.
   */
  podChanges?(namespace: string, name: string, onChange: () => void): Promise<() => void>;
  /**
   * Starts `command` in the Pod's `run` container; `onStatus` gets its end (`Closed`, with no exit code, when the
   * stream ends without one). Resolves with the stream's closer.
   */
  exec(
    namespace: string,
    pod: string,
    command: string[],
    io: { stdout: Writable; stderr: Writable; stdin: Readable | null },
    onStatus: (status: ExecStatus) => void,
  ): Promise<{ close(): void }>;
  /**
   * Whether the Pod is being deleted (it has a deletion timestamp), with its phase, reason and message (an eviction's
   * `Evicted` and the kubelet's why). Rejects with KubernetesApiError 404 once it is gone.
   */
  podEnd(
    namespace: string,
    name: string,
  ): Promise<{ deleting: boolean; phase?: string; reason?: string; message?: string }>;
}
