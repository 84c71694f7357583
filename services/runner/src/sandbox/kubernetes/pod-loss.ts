import type { SandboxProcess } from '../run-sandbox';
import { KubernetesApiError, type KubernetesClient } from './kubernetes-api';

/** Longest part of the kubelet's own eviction message kept in the run's message. */
const MESSAGE_CHARS = 200;

/**
 * Why a run's Pod is gone or going while the run used it, or undefined while it runs. Kubernetes ends a Pod's
 * processes on its own when the Pod is deleted (a person, a controller, a node drain: it then carries a deletion
 * timestamp, or is gone) or evicted by its node (phase Failed, reason Evicted): the agent did not fail, its sandbox
 * went, and the run must say so rather than report the agent's exit code: it goes on from its last turn in a new Pod
 * (pod-checkpoints.ts), or ends naming the cause; nothing restarts the run from scratch. The cause as the timeline
 * says the run resumed after it: "the run's Pod was deleted".
 */
export async function podLossCause(
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
    return `the run's Pod was evicted by its node${why}`;
  }
  if (end.deleting) return DELETED;
  return undefined;
}

/** The run's message for a lost Pod's cause, where the run ends on it rather than going on. */
export const whileInProgress = (cause: string | undefined): string | undefined =>
  cause && `${cause[0]!.toUpperCase()}${cause.slice(1)} while the run was in progress`;

/**
 * `proc`, whose exit says the Pod was lost under it (`SandboxExit.lost`, the cause) when `check` finds so after an
 * exit that was not clean: the harness then throws SandboxLost and the run goes on from its last turn.
 */
export function reportingLoss(
  proc: SandboxProcess,
  check: (exit: Awaited<SandboxProcess['exited']>) => Promise<string | undefined> | undefined,
): SandboxProcess {
  const exited = proc.exited.then(async (exit) => {
    const cause = await check(exit);
    return cause ? { ...exit, lost: cause } : exit;
  });
  return {
    stdin: proc.stdin,
    stdout: proc.stdout,
    stderr: proc.stderr,
    exited,
    kill: (ms) => proc.kill(ms),
    // A durable agent's read position, for its adoption record.
    get offsets() {
      return proc.offsets;
    },
  };
}

const DELETED = "the run's Pod was deleted";
