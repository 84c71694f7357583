import { AppError } from '@conveyor/errors';
import { CommandHarness } from '../harness/command-harness';
import type { Harness } from '../harness/harness';
import { ModelAccessGrant, modelHarnessType } from '../model-proxy/model-access-grant';
import type { RunningModelProxy } from '../model-proxy/start-model-proxy';
import type { OrchestratorLink } from '../orchestrator-link';
import { overBudget, reportStep, type Completion, type ExecutionContext } from './execution-context';

/** The run's model access, or the completion that ends the run before anything of it starts. */
export type ModelAccessOutcome = { grant?: ModelAccessGrant } | { refused: Completion };

/**
 * Registers the run with the model proxy when its harness drives a model CLI, its usage, budget, refused key and
 * refused requests reported on the run. An operator's command adapter may run without a credential (it may bring
 * its own); a built-in CLI harness may not, and the run fails (no credential, or one that cannot be used).
 */
export async function openModelAccess(
  ctx: ExecutionContext,
  link: Pick<OrchestratorLink, 'call'>,
  proxy: RunningModelProxy | undefined,
  harness: Harness,
  /** The token the run's agent holds already (a run taken back after a runner restart). */
  token?: string,
): Promise<ModelAccessOutcome> {
  if (!proxy || !modelHarnessType(ctx.assignment.harness)) return {};
  const { reporter } = ctx;
  let grant: ModelAccessGrant;
  try {
    grant = await ModelAccessGrant.open(
      link,
      proxy,
      ctx.target,
      {
        onUsage: (usage) => reporter.emit({ kind: 'usage', ...usage }),
        onBudgetExceeded: (spent, budget) => ctx.halt(overBudget(spent, budget)),
        // A CLI may retry or wait for input after a refused key; the run cannot go on, so it ends here.
        onKeyRejected: (status, secret) =>
          ctx.halt({
            state: 'FAILED',
            message: `The model provider rejected the key in team secret "${secret}" (HTTP ${status})`,
            errorCode: 'external_authentication_required',
          }),
        onRefused: (refusal) => reporter.emit({ kind: 'egress_refused', ...refusal }),
      },
      token,
    );
  } catch (err) {
    if (!(err instanceof AppError) || err.code === 'conflict') throw err;
    if (harness instanceof CommandHarness && err.code === 'integration_not_configured') return {};
    reportStep(ctx, 'harness_start', 'failed', err.message);
    return { refused: { state: 'FAILED', message: err.message, errorCode: err.code } };
  }
  reporter.redactor.add(grant.credential.api_key);
  if (grant.overBudget) {
    grant.close();
    return { refused: overBudget(grant.credential.spent_usd, grant.credential.budget_usd) };
  }
  return { grant };
}
