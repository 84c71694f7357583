import { KubernetesApiError, type KubernetesClient } from './kubernetes-api';

/** Longest part of the kubelet's own eviction message kept in the run's message. */
const MESSAGE_CHARS = 200;

/**
 * Why a run's Pod is gone or going while the run used it, or undefined while it runs. Kubernetes ends a Pod's
 * processes on its own when the Pod is deleted (a person, a controller, a node drain: it then carries a deletion
 * timestamp, or is gone) or evicted by its node (phase Failed, reason Evicted): the agent did not fail, its sandbox
 * went, and the run must say so rather than report the agent's exit code. A run cannot resume on this backend yet
 * (docs/sandbox.md "Kubernetes"), so the message names the cause and nothing restarts the run from scratch.
 */
export async function podLoss(
  api: Pick<KubernetesClient, 'podEnd'>,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  let end: Awaited<ReturnType<KubernetesClient['podEnd']>>;
  try {
    end = await api.podEnd(namespace, name);
  } catch (err) {
    if (err instanceof KubernetesApiError && err.status === 404) return DELETED;
    return undefined; // the API cannot say: the agent's own exit stands
  }
  if (end.phase === 'Failed' && end.reason === 'Evicted') {
    const why = end.message ? ` (${end.message.slice(0, MESSAGE_CHARS)})` : '';
    return `The run's Pod was evicted by its node${why} while the run was in progress`;
  }
  if (end.deleting) return DELETED;
  return undefined;
}

const DELETED = "The run's Pod was deleted while the run was in progress";
