import { AppError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import type { IntegrationWork } from '../deliveries/delivery-processor';
import type { AutomationOutcome } from '../deliveries/delivery-store';

export const NO_WORK: IntegrationWork = { outcomes: [], runs: [] };

type Outcome = Omit<AutomationOutcome, 'automation_id' | 'automation_name'>;

/**
 * An integration's answers to a delivery, listed in the delivery log beside the automations' under its ID and name:
 * `started` for a run or follow-up, `only` for an outcome alone, `refused` for a run its own configuration makes
 * impossible (recorded, not retried forever; anything else is thrown for the delivery to be retried).
 */
export function integrationOutcomes(integration: { id: string; name: string }, log: Logger) {
  const base = { automation_id: integration.id, automation_name: integration.name };
  const only = (o: Outcome): IntegrationWork => ({ ...NO_WORK, outcomes: [{ ...base, ...o }] });
  return {
    only,
    started: (runId: string, work: Omit<IntegrationWork, 'outcomes'>): IntegrationWork => ({
      ...work,
      outcomes: [{ ...base, matched: true, run_id: runId }],
    }),
    refused(err: unknown): IntegrationWork {
      if (!(err instanceof AppError) || err.code === 'internal_error' || err.code === 'resource_unavailable')
        throw err;
      log.warn(
        { integrationId: integration.id, err: err.message },
        `${integration.name} could not start a run`,
      );
      return only({ matched: true, error: `${err.code}: ${err.message}` });
    },
  };
}

export type IntegrationOutcomes = ReturnType<typeof integrationOutcomes>;
