import type { PrismaClient, Webhook, WebhookDelivery } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { EVENT_PAYLOAD_FILE, webhookRunPrompt } from '../automations/run-envelope';
import type { IntegrationWork, PrepareRun, StartRunInput } from '../deliveries/delivery-processor';
import type { AppRunBudget } from './app-run-budget';
import type { IntegrationOutcomes } from './integration-outcome';

/** The member who registered an integration acts for it, as an automation's creator does for the automation. */
export const integrationCaller = (app: { teamId: string; createdById: string | null }): Caller => ({
  team_id: app.teamId,
  principal_type: 'USER',
  principal_id: app.createdById ?? '',
  role: 'ADMIN',
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
});

/** Adds values to a run's metadata (where an integration keeps where to answer). */
export async function setRunMetadata(
  db: PrismaClient,
  runId: string,
  values: Record<string, string>,
): Promise<void> {
  const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { metadata: true } });
  await db.run.update({
    where: { id: runId },
    data: { metadata: { ...((run.metadata ?? {}) as Record<string, string>), ...values } },
  });
}

/** A new run of an integration: what it is asked and where it reports; the delivery's part is added here. */
export interface IntegrationRunSpec {
  /** What the agent is asked, before the envelope naming the delivery. */
  prompt: string;
  /** Cut to 80 characters. */
  title: string;
  config: StartRunInput['config'];
  /** Who asked and where (the delivery's keys are added). */
  metadata: Record<string, string>;
  /** The event payload file the run reads the request from. */
  payload: Buffer;
  source: string;
  /** The prepared run's environment as this integration changes it (the repository it pushes with its credential). */
  environment?: (spec: unknown) => unknown;
}

/** The delivery a run starts from, and who the integration's hourly budget counts against. */
export interface IntegrationRunDelivery {
  teamId: string;
  caller: Caller;
  outcomes: IntegrationOutcomes;
  webhook: Webhook;
  entry: WebhookDelivery;
  /** How the budget's refusal names it: the integrations ("Slack apps") and their setting. */
  budget: { kinds: string; setting: string };
}

/** What starting an integration's run needs: the kind's hourly budget, and the run preparation. */
export interface IntegrationRunDeps {
  budget: Pick<AppRunBudget, 'take' | 'runsPerHour'>;
  prepareRun: PrepareRun;
}

/** What an integration kind's delivery evaluator needs: its runs, and the store and outbox follow-ups go through. */
export interface IntegrationEvaluatorDeps extends IntegrationRunDeps {
  db: PrismaClient;
  kickOutbox: () => void;
}

/**
 * The tail every integration's new run shares: the team's hourly budget for the kind taken, then the run prepared as
 * the member who registered the integration, in the webhook envelope with the payload file and the delivery's keys;
 * a run its configuration makes impossible is refused (recorded in the delivery log), anything else is thrown.
 */
export async function startIntegrationRun(
  deps: IntegrationRunDeps,
  delivery: IntegrationRunDelivery,
  spec: IntegrationRunSpec,
): Promise<IntegrationWork> {
  const { caller, outcomes, webhook, entry, budget } = delivery;
  if (!(await deps.budget.take(delivery.teamId)))
    return outcomes.only({
      matched: true,
      error: `rate_limited: the team's ${budget.kinds} started ${deps.budget.runsPerHour} runs this hour (${budget.setting})`,
    });
  try {
    const prepared = await deps.prepareRun(caller, {
      prompt: webhookRunPrompt({
        prompt: spec.prompt,
        webhookName: webhook.name,
        webhookUid: webhook.id,
        deliveryId: entry.deliveryId,
        receivedAt: entry.receivedAt,
      }),
      title: spec.title.slice(0, 80),
      config: spec.config,
      metadata: { ...spec.metadata, webhook_uid: webhook.id, delivery_id: entry.deliveryId },
      attachments: [{ fileName: EVENT_PAYLOAD_FILE, mimeType: 'application/json', data: spec.payload }],
      source: spec.source,
    });
    const run = spec.environment
      ? { ...prepared, environmentSpec: spec.environment(prepared.environmentSpec) }
      : prepared;
    return outcomes.started(run.id, { runs: [run] });
  } catch (err) {
    return outcomes.refused(err);
  }
}
