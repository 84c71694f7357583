import type { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { createOrphansCollectedCounter } from '@conveyor/metrics';
import type { OrchestratorLink } from '../../orchestrator-link';
import type { SandboxSettings } from '../sandbox-config';
import { clusterClient } from './kubernetes-client';
import { redisOrphanLock } from './orphan-lock';
import { OrphanReconciler, type RunState, type RunStatus } from './orphan-reconciler';
import { PodCheckpoints } from './pod-checkpoints';

/** At most this many run IDs per GetRunStates call (the orchestrator's bound). */
const STATES_PER_CALL = 500;

const STATES: Record<string, RunState> = {
  ORPHAN_RUN_STATE_ACTIVE: 'active',
  ORPHAN_RUN_STATE_ENDED: 'ended',
  ORPHAN_RUN_STATE_ABANDONED: 'abandoned',
  ORPHAN_RUN_STATE_MISSING: 'missing',
};

/** The orphan reconciler of a Kubernetes runner (docs/sandbox.md), started: asks the orchestrator, counts in /metrics. */
export function startOrphanReconciler(
  config: SandboxSettings & { WORKSPACE_ROOT: string; RUNNER_ID: string },
  link: OrchestratorLink,
  redis: Redis,
  metrics: Parameters<typeof createOrphansCollectedCounter>[0],
  logger: Logger,
): OrphanReconciler {
  const collected = createOrphansCollectedCounter(metrics);
  const reconciler = new OrphanReconciler(
    {
      namespace: config.SANDBOX_K8S_NAMESPACE,
      intervalMs: config.SANDBOX_K8S_ORPHAN_INTERVAL_MS,
      runStates: async (runIds) => {
        const states = new Map<string, RunStatus>();
        for (let i = 0; i < runIds.length; i += STATES_PER_CALL) {
          const { runs } = await link.call('GetRunStates', { run_ids: runIds.slice(i, i + STATES_PER_CALL) });
          for (const { run_id, state, execution } of runs) {
            const known = STATES[state];
            if (known) states.set(run_id, { state: known, execution });
          }
        }
        return states;
      },
      lock: redisOrphanLock(redis, config.RUNNER_ID),
      runnerSelector: Object.entries(config.SANDBOX_K8S_RUNNER_LABELS)
        .map(([key, value]) => `${key}=${value}`)
        .join(','),
      warmMaxIdleMs: config.SANDBOX_K8S_WARM_MAX_IDLE_MS,
      policyGraceMs: config.SANDBOX_K8S_ORPHAN_INTERVAL_MS,
      ...(config.SANDBOX_K8S_SNAPSHOT_CLAIM
        ? { checkpoints: new PodCheckpoints(config.WORKSPACE_ROOT, config.SANDBOX_K8S_SNAPSHOT_CLAIM) }
        : {}),
      onCollected: (kind, count) => collected.inc({ kind }, count),
      logger: logger.child({ component: 'orphan-reconciler' }),
    },
    clusterClient(),
  );
  reconciler.start();
  return reconciler;
}
