import type { Webhook, WebhookDelivery } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Caller } from '../auth/caller';
import type { IntegrationEvaluator, IntegrationWork } from '../deliveries/delivery-processor';
import { integrationOutcomes, NO_WORK, type IntegrationOutcomes } from './integration-outcome';
import {
  integrationCaller,
  startIntegrationRun,
  type IntegrationRunDeps,
  type IntegrationRunSpec,
} from './integration-runs';

/** What every integration owning a webhook records: whose it is, and whether it is broken. */
interface OwningIntegration {
  id: string;
  name: string;
  teamId: string;
  createdById: string | null;
  status: string;
  brokenReason: string | null;
}

/** How an integration kind (a GitHub App, a Slack app, a Linear integration) opens a delivery of its webhook. */
export interface IntegrationKind<I extends OwningIntegration, D extends { kind: string }> {
  /** The integration owning the webhook, if any. */
  find(webhookId: string): Promise<I | null>;
  /** How the delivery log names it, before its own name ("GitHub App"). */
  label: string;
  /** What a broken one's outcome says, before the reason it was marked broken with ("the App is broken"). */
  broken: string;
  /** What the payload asks of it; `ignore` is recorded as a mismatch. */
  decide(integration: NoInfer<I>, payload: unknown): D | { kind: 'ignore'; reason: string };
  /** How the hourly budget's refusal names the kind's integrations ("Slack apps") and their setting. */
  budget: { kinds: string; setting: string };
}

/** A delivery an integration owns and acts on, with the answers it records (integration-outcome.ts). */
export interface OpenedDelivery<I, D> {
  integration: I;
  decision: D;
  caller: Caller;
  outcomes: IntegrationOutcomes;
  webhook: Webhook;
  entry: WebhookDelivery;
  payload: unknown;
  body: Buffer;
  log: Logger;
  /** Starts a new run for the delivery, within the team's hourly budget for the kind (integration-runs.ts). */
  startRun(spec: IntegrationRunSpec): Promise<IntegrationWork>;
}

/**
 * The opening every integration's delivery shares: find the integration by the webhook (none owns it: no work),
 * refuse while it is broken, record what it ignores; then `act` on what it decided, as the member who registered it.
 */
export function integrationFor<I extends OwningIntegration, D extends { kind: string }>(
  kind: IntegrationKind<I, D>,
  deps: IntegrationRunDeps,
  act: (delivery: OpenedDelivery<I, Exclude<D, { kind: 'ignore' }>>) => Promise<IntegrationWork>,
): IntegrationEvaluator {
  return async (webhook, entry, payload, body, log) => {
    const integration = await kind.find(webhook.id);
    if (!integration) return NO_WORK;
    const outcomes = integrationOutcomes(
      { id: integration.id, name: `${kind.label} ${integration.name}` },
      log,
    );
    if (integration.status !== 'active')
      return outcomes.only({ matched: false, error: `${kind.broken}: ${integration.brokenReason ?? ''}` });
    const decision = kind.decide(integration, payload);
    if (decision.kind === 'ignore')
      return outcomes.only({ matched: false, mismatches: [(decision as { reason: string }).reason] });
    const caller = integrationCaller(integration);
    const startRun = (spec: IntegrationRunSpec) =>
      startIntegrationRun(
        deps,
        { teamId: integration.teamId, caller, outcomes, webhook, entry, budget: kind.budget },
        spec,
      );
    return act({
      integration,
      decision: decision as Exclude<D, { kind: 'ignore' }>,
      caller,
      outcomes,
      webhook,
      entry,
      payload,
      body,
      log,
      startRun,
    });
  };
}

/**
 * The integrations a delivery may belong to (a GitHub App, a Slack app's webhook), each asked in turn: one that does
 * not own the webhook answers nothing, so a delivery gets the work of the one that does.
 */
export const anyIntegration =
  (...evaluators: IntegrationEvaluator[]): IntegrationEvaluator =>
  async (...delivery) => {
    const work: IntegrationWork[] = [];
    for (const evaluate of evaluators) work.push(await evaluate(...delivery));
    const after = work.flatMap((w) => (w.after ? [w.after] : []));
    return {
      outcomes: work.flatMap((w) => w.outcomes),
      runs: work.flatMap((w) => w.runs),
      ...(after.length > 0 ? { after: async () => void (await Promise.all(after.map((a) => a()))) } : {}),
    };
  };
