import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { csv, port } from '@conveyor/config';
import type { SandboxLimits } from './run-sandbox';

/** A Kubernetes toleration (core/v1), as the run Pods carry it. */
const toleration = z
  .object({
    key: z.string().min(1).optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .strict();

/** A setting holding JSON: parsed, then checked by `schema` (a malformed value fails at start, naming the setting). */
function jsonSetting<T extends z.ZodTypeAny>(schema: T, fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((raw, ctx): unknown => {
      try {
        return JSON.parse(raw);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/** The isolation backends a runner can be configured with; sandbox-backends.ts builds each. */
export const SANDBOX_BACKENDS = ['bubblewrap', 'kubernetes', 'none'] as const;

/** The value of RUN_SANDBOX_NONE_ACKNOWLEDGED that lets a runner start with RUN_SANDBOX=none. */
export const NONE_ACKNOWLEDGEMENT = 'runs-are-not-isolated';

/** Sandbox settings shared by the runner and the self-hosted worker program (docs/sandbox.md). */
export const sandboxEnv = {
  RUN_SANDBOX: z
    .enum(SANDBOX_BACKENDS)
    .default('bubblewrap')
    .describe(
      'Isolation backend for everything a run executes: `bubblewrap` (local, the default), `kubernetes` (a Pod per run) or `none` (no isolation: development only, logged loudly at start and on every run).',
    ),
  RUN_SANDBOX_NONE_ACKNOWLEDGED: z
    .enum(['', NONE_ACKNOWLEDGEMENT])
    .default('')
    .describe(
      '`RUN_SANDBOX=none` starts only with this set to `runs-are-not-isolated`: a second, explicit setting, so that no configuration runs agents bare by a stray or copied `none`.',
    ),
  SANDBOX_ALLOWED_HOSTS: csv('').describe(
    'Hosts every run may reach (model providers, git hosts, registries): names or `*.suffix`, comma-separated.',
  ),
  SANDBOX_INTERNAL_HOSTS: csv('').describe(
    '`host:port` pairs on private networks runs may reach through the egress filter (an internal git server).',
  ),
  SANDBOX_READONLY_PATHS: csv('').describe(
    'Extra host directories visible read-only inside local sandboxes (agent CLIs installed outside node_modules).',
  ),
  RUN_MAX_RESUMPTIONS: z.coerce
    .number()
    .int()
    .min(0)
    .max(20)
    .default(3)
    .describe(
      "How often one run may go on from its last turn's checkpoint after its agent was lost with its sandbox (0: never; the run then ends ERROR).",
    ),
  SANDBOX_STATE_DIR: z
    .string()
    .default(path.join(os.tmpdir(), 'conveyor-sandbox'))
    .describe(
      "Where the local backend keeps each run's sockets (short: unix socket paths are limited to 108 bytes).",
    ),
  SANDBOX_RUNNER_USER: z
    .string()
    .min(1)
    .default('conveyor-runner')
    .describe(
      'The unprivileged account the runner drops to after forking its privileged helper (local backend; created by scripts/infra.sh up).',
    ),
  SANDBOX_MONITOR_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(1000)
    .describe(
      "How often the local backend measures each run's workspace and processes against their limits.",
    ),
  SANDBOX_K8S_NAMESPACE: z
    .string()
    .default('conveyor')
    .describe("Kubernetes backend: namespace of the runs' Pods (the runner's own, by the downward API)."),
  SANDBOX_K8S_POD_IP: z
    .string()
    .default('')
    .describe(
      "Kubernetes backend: this runner pod's IP (downward API `status.podIP`): where the other replicas' run gateways pass on requests for the runs this one holds.",
    ),
  SANDBOX_K8S_GATEWAY_SERVICE: z
    .string()
    .min(1)
    .default('conveyor-runner-runs')
    .describe(
      'Kubernetes backend: the Service selecting every runner pod on SANDBOX_K8S_GATEWAY_PORT (port and targetPort alike), through which run Pods reach their egress filter and endpoints. Resolved once at start: run Pods get its cluster IP, as they have no DNS.',
    ),
  SANDBOX_K8S_GATEWAY_PORT: port(8300).describe(
    "Kubernetes backend: port of the run gateway on every runner pod, the only one a run's Pod may reach (each run presents its own key).",
  ),
  SANDBOX_K8S_POD_NAME: z
    .string()
    .default('')
    .describe(
      "Kubernetes backend: this runner pod's name (downward API `metadata.name`), named on its warm Pods (`conveyor.dev/runner-pod`) and the owner of its runs' CSI workspace claims. Run Pods and their NetworkPolicies have no owner: they outlive the runner for the replica that adopts the run, and the orphan reconciler collects them.",
    ),
  SANDBOX_K8S_POD_UID: z
    .string()
    .default('')
    .describe(
      "Kubernetes backend: this runner pod's uid (downward API `metadata.uid`), the owner of its runs' CSI workspace claims.",
    ),
  SANDBOX_K8S_RUNNER_LABELS: csv('app.kubernetes.io/name=conveyor-runner')
    .transform((pairs) =>
      Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])),
    )
    .describe('Kubernetes backend: labels of the runner pods, `key=value` comma-separated.'),
  SANDBOX_K8S_DEFAULT_IMAGE: z
    .string()
    .default('node:20-bookworm-slim')
    .describe('Kubernetes backend: image of environments without a `docker_image`.'),
  SANDBOX_K8S_CPU: z
    .string()
    .default('1')
    .describe(
      "Kubernetes backend: CPU request of each run's Pod (a Kubernetes quantity such as `1` or `500m`), and its limit unless SANDBOX_K8S_CPU_LIMIT is set.",
    ),
  SANDBOX_K8S_CPU_LIMIT: z
    .string()
    .default('')
    .describe(
      "Kubernetes backend: CPU limit of each run's Pod when above its request (SANDBOX_K8S_CPU): the Pod may burst to it while its node has CPU to spare, which shortens the agent CLI's CPU-bound start. Empty: the limit is the request.",
    ),
  SANDBOX_K8S_NODE_SELECTOR: jsonSetting(z.record(z.string().min(1), z.string()), '{}').describe(
    'Kubernetes backend: `nodeSelector` of the run Pods, warm and cold alike (JSON object of node labels, e.g. `{"conveyor.dev/runs":"true"}`). A selector no node matches leaves the run `resource_unavailable` after SANDBOX_K8S_UNSCHEDULABLE_TIMEOUT_MS, its timeline naming the scheduler\'s reason.',
  ),
  SANDBOX_K8S_TOLERATIONS: jsonSetting(z.array(toleration), '[]').describe(
    'Kubernetes backend: `tolerations` of the run Pods, warm and cold alike (JSON array of Kubernetes tolerations), so that they may go to nodes tainted for runs.',
  ),
  SANDBOX_K8S_PRIORITY_CLASS: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$/, 'a PriorityClass name')
    .default('')
    .describe(
      'Kubernetes backend: `priorityClassName` of the run Pods (an existing PriorityClass); empty, the cluster default.',
    ),
  SANDBOX_K8S_SNAPSHOT_CLAIM: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$/, 'a PersistentVolumeClaim name')
    .default('')
    .describe(
      "Kubernetes backend: the PersistentVolumeClaim mounted at WORKSPACE_ROOT that holds the environment snapshots (shared by the runner replicas, kept across deploys). A run starting from a snapshot mounts its team's archive from it read-only and unpacks it on the node; empty, the store is the runner's own volume and archives are streamed into Pods through the exec API (docs/snapshots.md).",
    ),
  SANDBOX_K8S_START_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(180_000)
    .describe(
      "Kubernetes backend: how long a run's Pod may take to be running (image pull included) before the run fails as sandbox-unavailable.",
    ),
  SANDBOX_K8S_UNSCHEDULABLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(120_000)
    .describe(
      "Kubernetes backend: how long the scheduler may keep saying no node can take a run's Pod (too little CPU or memory, taints, quotas) before the run ends ERROR `resource_unavailable` naming the scheduler's reason; the reason is on the run's timeline as soon as the scheduler gives it. Long enough for a cluster autoscaler to add a node.",
    ),
  SANDBOX_K8S_WARM_PODS: csv('')
    .transform((pools, ctx) => {
      const images = new Map<string, { floor: number; ceiling: number }>();
      for (const pool of pools) {
        const at = pool.lastIndexOf('=');
        const bounds = /^(\d+):(\d+)$/.exec(pool.slice(at + 1));
        const [floor, ceiling] = [Number(bounds?.[1]), Number(bounds?.[2])];
        if (at < 1 || !bounds || floor > ceiling) {
          ctx.addIssue({ code: 'custom', message: `"${pool}" is not image=floor:ceiling (floor ≤ ceiling)` });
          return z.NEVER;
        }
        images.set(pool.slice(0, at), { floor, ceiling });
      }
      return images;
    })
    .describe(
      'Kubernetes backend: warm run Pods (docs/sandbox.md), started before any run asks and taken by one run each, per image: `image=floor:ceiling`, comma-separated (e.g. `node:20-bookworm-slim=1:4`). Each pool keeps as many as were asked for in the last SANDBOX_K8S_WARM_DEMAND_WINDOW_MS, at least `floor` and at most `ceiling`; empty: none (every run starts its own Pod). Each warm Pod holds its CPU and memory requests while it waits.',
    ),
  SANDBOX_K8S_WARM_DEMAND_WINDOW_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe(
      'Kubernetes backend: the window of recent demand a warm Pod pool is sized from (runs of its image, taken or missed).',
    ),
  SANDBOX_K8S_WARM_MAX_IDLE_MS: z.coerce
    .number()
    .int()
    .min(10_000)
    .default(600_000)
    .describe(
      "Kubernetes backend: a warm run Pod no run took within this time is replaced by a new one (its deadline is this plus RUN_TIMEOUT_MS, cut to the run's wall clock when taken).",
    ),
  SANDBOX_K8S_ORPHAN_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(30_000)
    .describe(
      'Kubernetes backend: between two passes of the orphan reconciler (one runner replica at a time), which deletes the run Pods, NetworkPolicies and checkpoints of runs that ended, are gone or were abandoned, and the warm Pods of runners that are gone.',
    ),
  SANDBOX_K8S_WARM_STREAM_MAX_MB: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(32)
    .describe(
      "Kubernetes backend, with SANDBOX_K8S_SNAPSHOT_CLAIM and warm Pods: a run's snapshot up to this many MiB is streamed into a warm Pod through exec; a larger one gets a Pod of its own that mounts it (a warm Pod cannot get a new mount).",
    ),
  SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$/, 'a VolumeSnapshotClass name')
    .default('')
    .describe(
      "Kubernetes backend: a VolumeSnapshotClass of a CSI driver that implements snapshots. Set, each run's workspace is a PersistentVolumeClaim of SANDBOX_K8S_WORKSPACE_STORAGE_CLASS, an environment snapshot is a VolumeSnapshot of the setup run's claim, and a later run's claim is cloned from it by the storage (no archive, no exec); warm Pods and SANDBOX_K8S_SNAPSHOT_CLAIM's archives are then not used for runs. Empty: archives (docs/sandbox.md).",
    ),
  SANDBOX_K8S_WORKSPACE_STORAGE_CLASS: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$/, 'a StorageClass name')
    .default('')
    .describe(
      "Kubernetes backend, with SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS: the StorageClass of each run's workspace claim (one of the same CSI driver); empty, the cluster's default StorageClass.",
    ),
  FAILURE_SESSION_RETENTION_MINUTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(10)
    .describe(
      "How long a workspace is kept after a failed environment setup for a debug session: set it to the orchestrator's value of the same name (docs/run-lifecycle.md). Other workspaces are deleted when their execution ends.",
    ),
  SNAPSHOT_MAX_AGE_HOURS: z.coerce
    .number()
    .positive()
    .default(7 * 24)
    .describe('Environment snapshots (docs/snapshots.md): dropped this many hours after their last use.'),
  SNAPSHOT_MAX_MB: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(20 * 1024)
    .describe(
      "Environment snapshots: dropped, least recently used first, while together they hold more than this many MiB of the host's disk.",
    ),
  RUN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60 * 60 * 1000)
    .describe('Wall-clock budget of one execution.'),
  RUN_MAX_PROCESSES: z.coerce
    .number()
    .int()
    .min(8)
    .default(512)
    .describe('Processes (tasks, threads included) one run may have at once.'),
  RUN_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(64)
    .default(4096)
    .describe("Memory of one run's processes together, in MiB."),
  RUN_DISK_MB: z.coerce
    .number()
    .int()
    .min(16)
    .default(10 * 1024)
    .describe('Size the workspace may reach, in MiB.'),
};

export type SandboxSettings = z.infer<z.ZodObject<typeof sandboxEnv>>;

export function sandboxLimits(config: {
  RUN_TIMEOUT_MS: number;
  RUN_MAX_PROCESSES: number;
  RUN_MEMORY_MB: number;
  RUN_DISK_MB: number;
}): SandboxLimits {
  return {
    wallClockMs: config.RUN_TIMEOUT_MS,
    maxProcesses: config.RUN_MAX_PROCESSES,
    memoryBytes: config.RUN_MEMORY_MB * 1024 * 1024,
    diskBytes: config.RUN_DISK_MB * 1024 * 1024,
  };
}
