// The runner's sandbox, for programs beside the runner (bench/, tests/security): the contract, the backends, the egress proxy.
export * from './sandbox/run-sandbox';
export { BwrapBackend } from './sandbox/bwrap/bwrap-backend';
export { PrivilegedHelper } from './sandbox/bwrap/privileged/helper-client';
export { UnsandboxedBackend } from './sandbox/unsandboxed-backend';
export { TurnCheckpoints } from './execution/turn-checkpoints';
export {
  runLabels,
  runNetworkPolicy,
  runPod,
  type PodSettings,
} from './sandbox/kubernetes/kubernetes-objects';
export { EgressProxy } from './sandbox/egress-proxy';
// The settings of its two programs, for the settings reference (scripts/settings-reference.js).
export { runnerSettings } from './config';
export { workerSettings } from './worker-config';
