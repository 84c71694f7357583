import { EgressFilter, reportEgress } from '../egress-proxy';
import { SandboxUnavailable, type SandboxPolicy } from '../run-sandbox';
import type { KubernetesClient, ListedObject } from './kubernetes-api';
import { EXECUTION_LABEL, RUN_ID_LABEL, RUN_LABEL, runLabels } from './kubernetes-objects';
import type { RunGateway } from './run-gateway';

/** The Pods a runner made for runs: only those may be reopened, whoever labelled another Pod with a run ID. */
const RUN_PODS = 'app.kubernetes.io/managed-by=conveyor-runner';

/**
 * The run's Pod another replica started, found for an adopter by its `conveyor.dev/run-id` label (docs/sandbox.md
 * "Run leases"), and its run served by this replica's gateway again: under the key the Pod's agent already holds (the
 * adoption record's `reopenSecret`), with the egress filter and endpoints of the run's own policy, built as `prepare`
 * builds them — the adopter grants nothing the run's assignment does not. The Pod is the one labelled with the
 * execution adopted (`conveyor.dev/execution`); an earlier execution's Pod not yet collected is never taken. Throws
 * `SandboxUnavailable` naming why not (no key recorded, no such Pod or more than one, the Pod not running): the run
 * then goes on from its last turn.
 */
export async function reopenRunPod(
  api: KubernetesClient,
  options: { namespace: string; gateway: RunGateway; internalHosts: string[] },
  policy: SandboxPolicy,
  log: Parameters<typeof reportEgress>[1],
): Promise<{
  name: string;
  key: string;
  closers: Array<() => Promise<unknown>>;
  forget: () => void;
}> {
  const { namespace } = options;
  const key = policy.reopenSecret;
  if (!key) throw new SandboxUnavailable("its adoption record holds no key of the run's gateway");
  if (!runLabels(policy)[RUN_ID_LABEL]) throw new SandboxUnavailable('its run ID cannot name a Pod');
  const pods = ofExecution(
    (await api.listPods(namespace, `${RUN_PODS},${RUN_ID_LABEL}=${policy.runId}`)).filter(
      (pod) => !pod.deleting && pod.labels[RUN_LABEL] === pod.name,
    ),
    policy.execution,
  );
  if (pods.length !== 1)
    throw new SandboxUnavailable(
      pods.length === 0
        ? "the run's Pod is gone"
        : `the run has ${pods.length} Pods; which one is its agent's is unknown`,
    );
  const { name } = pods[0]!;
  const status = await api.podPhase(namespace, name);
  if (status.phase !== 'Running')
    throw new SandboxUnavailable(`the run's Pod is ${status.phase ?? 'in an unknown phase'}`);
  const registration = await options.gateway.register(
    {
      runId: policy.runId,
      egress: new EgressFilter(
        { allowedHosts: policy.allowedHosts, internalHosts: options.internalHosts },
        reportEgress(policy, log),
      ),
      endpoints: policy.endpoints,
    },
    key,
  );
  // As for a Pod this replica made: the run's end here deletes it and its NetworkPolicy (named as the Pod).
  const closers = [
    () => registration.close(),
    () => api.deleteNetworkPolicy(namespace, name),
    () => api.deletePod(namespace, name),
  ];
  return { name, key, closers, forget: () => registration.forget() };
}

/**
 * The run's Pods of `execution`; where none is labelled with one, those a runner made before Pods carried their
 * execution (a rollout from such a version): never a Pod labelled with another execution.
 */
function ofExecution(pods: ListedObject[], execution: number | undefined): ListedObject[] {
  if (execution === undefined) return pods;
  const labelled = pods.filter((pod) => pod.labels[EXECUTION_LABEL] === String(execution));
  return labelled.length > 0 ? labelled : pods.filter((pod) => pod.labels[EXECUTION_LABEL] === undefined);
}
