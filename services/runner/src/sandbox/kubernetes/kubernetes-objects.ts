import type { SandboxPolicy } from '../run-sandbox';

/** Where the workspace volume is mounted in a run's Pod. */
export const POD_WORKSPACE = '/workspace';
/** Unprivileged uid/gid of every run's container (the image's own user is not trusted to be non-root). */
export const POD_UID = 65534;
export const RUN_LABEL = 'conveyor.dev/run-sandbox';
/** The run a Pod serves: what the orphan reconciler asks the orchestrator about (orphan-reconciler.ts). */
export const RUN_ID_LABEL = 'conveyor.dev/run-id';
/** The run's execution a Pod serves: which Pod an adopter takes, and which the orphan reconciler collects. */
export const EXECUTION_LABEL = 'conveyor.dev/execution';
/** The runner Pod that made a warm Pod. */
export const RUNNER_LABEL = 'conveyor.dev/runner-pod';
/** What a label value may be (63 characters at most); a run ID the orchestrator makes always is. */
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/;

/**
 * The labels naming the run and its execution, when its ID can be a label value (a Pod without them is never
 * collected nor reopened).
 */
export function runLabels(policy: Pick<SandboxPolicy, 'runId' | 'execution'>): Record<string, string> {
  if (!LABEL_VALUE.test(policy.runId)) return {};
  return {
    [RUN_ID_LABEL]: policy.runId,
    ...(policy.execution !== undefined ? { [EXECUTION_LABEL]: String(policy.execution) } : {}),
  };
}
/** Where a run's Pod finds its team's snapshot archive, read-only, when the store is a volume it mounts. */
export const POD_SNAPSHOT = '/snapshot.tar';
/** Where a resumed run's Pod finds its own last turn's checkpoint, read-only (pod-checkpoints.ts). */
export const POD_CHECKPOINT = '/checkpoint.tar';

/**
 * A run Pod's CPU: what the scheduler holds for it, and what it may use. A limit above the request lets the Pod burst
 * while the node has CPU to spare — the agent CLI's start is CPU-bound (bench/README.md, Kubernetes) — and no more
 * than its request is ever taken from the node's other Pods.
 */
export interface PodCpu {
  request: string;
  limit: string;
}

/** The one file of the snapshot store's claim a run's Pod mounts (docs/snapshots.md, Kubernetes). */
export interface PodSnapshotVolume {
  claim: string;
  /** The pinned archive, relative to the claim's root: made by the runner from the run's own team and key. */
  subPath: string;
}

export interface PodPlacement {
  nodeSelector: Record<string, string>;
  tolerations: Array<Record<string, string | number>>;
  priorityClassName: string;
}

export interface PodSettings {
  namespace: string;
  /** Pod name; also the value of the `conveyor.dev/run-sandbox` label the NetworkPolicy selects. */
  name: string;
  image: string;
  /**
   * The runner pod that made the Pod: named on a warm Pod (whose pool is that runner's), never its owner — a run's
   * Pod outlives the runner that made it, for the replica that adopts the run; the orphan reconciler collects it.
   */
  owner?: { name: string; uid: string };
  /** Labels of the runner's own pods: the only destination a run's pod may reach. */
  runnerPodLabels: Record<string, string>;
  /** The runner pods' port of the run gateway (run-gateway.ts), where the run's key opens its egress and endpoints. */
  gatewayPort: number;
  cpu: PodCpu;
  /** Where the operator places run Pods (SANDBOX_K8S_NODE_SELECTOR, _TOLERATIONS, _PRIORITY_CLASS). */
  placement?: PodPlacement;
  /** Labels besides the run's own (a warm Pod's, warm-pods.ts). */
  labels?: Record<string, string>;
  /** The team's snapshot to unpack, when the run starts from one on a store the Pod can mount. */
  snapshot?: PodSnapshotVolume;
  /** The run's own last checkpoint, when the Pod goes on from it after its previous Pod was lost. */
  checkpoint?: PodSnapshotVolume;
  /** The run's workspace as a PersistentVolumeClaim instead of an emptyDir (CSI snapshots, volume-snapshots.ts). */
  workspaceClaim?: string;
}

/**
 * One Pod per run, the environment's image kept alive by `sleep` for the run's wall-clock budget (the API server
 * ends it at `activeDeadlineSeconds` too), commands exec'd into it. Non-root with no capabilities, no privilege
 * escalation, read-only root file system, no service-account token, no service-discovery variables; the workspace
 * is an emptyDir capped at the disk limit and /tmp a memory-backed one. Not labelled part-of conveyor, so that none
 * of the platform's own NetworkPolicies selects it.
 */
export function runPod(policy: SandboxPolicy, settings: PodSettings) {
  const seconds = Math.max(1, Math.ceil(policy.limits.wallClockMs / 1000));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: settings.name,
      namespace: settings.namespace,
      labels: {
        [RUN_LABEL]: settings.name,
        'app.kubernetes.io/managed-by': 'conveyor-runner',
        ...settings.labels,
      },
    },
    spec: {
      restartPolicy: 'Never',
      activeDeadlineSeconds: seconds,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      ...placementSpec(settings.placement),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: POD_UID,
        runAsGroup: POD_UID,
        fsGroup: POD_UID,
        // A workspace claim cloned from a snapshot is the run's uid's already: no chown walk over its files at start.
        fsGroupChangePolicy: 'OnRootMismatch',
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'run',
          image: settings.image,
          command: ['/bin/sh', '-c', `sleep ${seconds}`],
          workingDir: POD_WORKSPACE,
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            privileged: false,
            capabilities: { drop: ['ALL'] },
          },
          resources: {
            requests: {
              cpu: settings.cpu.request,
              memory: String(policy.limits.memoryBytes),
              'ephemeral-storage': String(policy.limits.diskBytes),
            },
            limits: {
              cpu: settings.cpu.limit,
              memory: String(policy.limits.memoryBytes),
              'ephemeral-storage': String(policy.limits.diskBytes),
            },
          },
          volumeMounts: [
            { name: 'workspace', mountPath: POD_WORKSPACE },
            { name: 'tmp', mountPath: '/tmp' },
            ...(settings.snapshot
              ? [
                  {
                    name: 'snapshot',
                    mountPath: POD_SNAPSHOT,
                    subPath: settings.snapshot.subPath,
                    readOnly: true,
                  },
                ]
              : []),
            ...(settings.checkpoint
              ? [
                  {
                    name: 'checkpoint',
                    mountPath: POD_CHECKPOINT,
                    subPath: settings.checkpoint.subPath,
                    readOnly: true,
                  },
                ]
              : []),
          ],
        },
      ],
      volumes: [
        settings.workspaceClaim
          ? { name: 'workspace', persistentVolumeClaim: { claimName: settings.workspaceClaim } }
          : { name: 'workspace', emptyDir: { sizeLimit: String(policy.limits.diskBytes) } },
        { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
        ...(settings.snapshot
          ? [
              {
                name: 'snapshot',
                persistentVolumeClaim: { claimName: settings.snapshot.claim, readOnly: true },
              },
            ]
          : []),
        ...(settings.checkpoint
          ? [
              {
                name: 'checkpoint',
                persistentVolumeClaim: { claimName: settings.checkpoint.claim, readOnly: true },
              },
            ]
          : []),
      ],
    },
  };
}

/**
 * Denies all ingress and all egress but the runner pods' run gateway port (the Pod reaches it through the gateway's
 * Service; policies apply to the Pod it forwards to): the host allow-list is applied by the gateway's egress filter
 * (a NetworkPolicy knows addresses, not names), so cluster services, DNS, private ranges and cloud metadata stay
 * unreachable.
 */
export function runNetworkPolicy(settings: PodSettings) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: settings.name,
      namespace: settings.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'conveyor-runner' },
    },
    spec: {
      podSelector: { matchLabels: { [RUN_LABEL]: settings.name } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [
        {
          to: [{ podSelector: { matchLabels: settings.runnerPodLabels } }],
          ports: [{ protocol: 'TCP', port: settings.gatewayPort }],
        },
      ],
    },
  };
}

/** `env -i` with the caller's variables, then `cd` and exec: the exec API has neither an environment nor a cwd. */
export function podExecCommand(argv: string[], env: Record<string, string>, cwd: string): string[] {
  return [
    'env',
    '-i',
    ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
    '/bin/sh',
    '-c',
    'cd "$1" && shift && exec "$@"',
    'sh',
    cwd,
    ...argv,
  ];
}

/** The placement's fields that are set; none, the scheduler's defaults. */
function placementSpec(placement: PodPlacement | undefined) {
  if (!placement) return {};
  return {
    ...(Object.keys(placement.nodeSelector).length > 0 ? { nodeSelector: placement.nodeSelector } : {}),
    ...(placement.tolerations.length > 0 ? { tolerations: placement.tolerations } : {}),
    ...(placement.priorityClassName ? { priorityClassName: placement.priorityClassName } : {}),
  };
}
