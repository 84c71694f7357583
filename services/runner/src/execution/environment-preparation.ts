import type { EnvironmentSpec, FetchRepository } from '../environment-setup';
import type { RunSandbox } from '../sandbox/run-sandbox';
import { setUpWithSnapshot, snapshotRef } from './environment-snapshots';
import { reportStep, type ExecutionContext } from './execution-context';

/**
 * Makes the laid-out workspace ready for the agent: the environment's repositories cloned and its setup commands run,
 * in the sandbox — or, when the sandbox started from the environment's snapshot, only new commits fetched
 * (docs/snapshots.md). A debug session reuses the failed run's workspace as it was. Throws `SetupFailure` when setup
 * fails.
 */
export async function prepareEnvironment(
  ctx: ExecutionContext,
  environment: EnvironmentSpec,
  sandbox: RunSandbox,
  env: Record<string, string>,
  fetchRepository: FetchRepository,
): Promise<void> {
  const { assignment } = ctx;
  if (assignment.debug_session) return;
  await setUpWithSnapshot({
    environment,
    sandbox,
    ref: snapshotRef(assignment.team_id, environment, false),
    capturable: assignment.attachments.length === 0,
    env,
    fetchRepository,
    signal: ctx.signal,
    step: (status, detail) => reportStep(ctx, 'setup_commands', status, detail),
    snapshot: (state, snapshotId) =>
      ctx.reporter.emit({
        kind: 'environment_snapshot',
        state,
        ...(snapshotId ? { snapshot_id: snapshotId } : {}),
      }),
    log: (level, text) => ctx.reporter.emit({ kind: 'log', level, text }),
  });
  ctx.trace.mark('environment_ready');
}
