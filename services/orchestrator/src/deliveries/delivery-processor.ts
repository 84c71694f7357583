import { AppError } from '@conveyor/errors';
import { newUuid, type Automation, type Prisma, type PrismaClient, type Webhook, type WebhookDelivery } from '@conveyor/db';
import type { DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { evaluateFilter } from '@conveyor/payload-filter';
import type { Caller__Output } from '@conveyor/proto';
import { parseWebhookTrigger } from '../automations/automation-trigger';
import { EVENT_PAYLOAD_FILE, webhookRunPrompt } from '../automations/run-envelope';

export interface DeliveryPosition {
  topic: string;
  partition: number;
  offset: string;
}

export interface StartRunInput {
  prompt: string;
  title: string;
  config: Record<string, unknown>;
  metadata: Record<string, string>;
  attachments: Array<{ fileName: string; mimeType: string; data: Buffer }>;
  source: string;
}

/** Starts one run (the lead's createRun in production); injected so the processor stays testable. */
export type StartRun = (caller: Caller__Output, input: StartRunInput) => Promise<{ runId: string }>;

export interface AutomationOutcome {
  automation_id: string;
  automation_name: string;
  matched: boolean;
  mismatches?: string[];
  error?: string;
  run_id?: string;
}

export interface DeliveryProcessorDeps {
  db: PrismaClient;
  logger: Logger;
  startRun: StartRun;
}

/** Runs started by a provider's webhook show that provider as their source; other webhooks are API-like. */
export function runSourceFor(webhook: Pick<Webhook, 'authMode' | 'signatureScheme'>): string {
  if (webhook.authMode === 'signature' && webhook.signatureScheme === 'github') return 'GITHUB_WEBHOOK';
  if (webhook.authMode === 'signature' && webhook.signatureScheme === 'gitlab') return 'GITLAB_WEBHOOK';
  return 'API';
}

/**
 * The orchestrator's side of the delivery log, consuming what the ingress published. Idempotent in two ways:
 * - each Kafka message writes at most one log entry (unique `sourcePosition` = topic:partition:offset), so a
 *   re-consumed message after a restart or rebalance finds its entry and only finishes what was left undone;
 * - one delivery ID is Accepted at most once per webhook (unique `acceptedDeliveryId`), so a second message
 *   accepting the same ID (a retry after an unclear 503) is logged Duplicate and starts nothing.
 * Runs are found again by their metadata (automation_id + delivery_id + webhook_uid) before one is started, so a
 * crash between starting a run and recording it never starts a second one.
 */
export class DeliveryProcessor {
  constructor(private readonly deps: DeliveryProcessorDeps) {}

  readonly handle = async (message: DeliveryMessage, position: DeliveryPosition): Promise<void> => {
    const { db, logger } = this.deps;
    const log = logger.child({ deliveryId: message.deliveryId, webhookUid: message.webhookUid, ...position });
    const webhook = await db.webhook.findUnique({ where: { id: message.webhookUid } });
    if (!webhook) {
      log.info({ label: message.label }, 'delivery for a deleted webhook skipped');
      return;
    }
    const entry = await this.record(webhook, message, position);
    if (entry.label !== 'Accepted' || entry.processedAt) return;
    // The entry's row lock serialises two consumers handed the same message around a rebalance: the second waits,
    // then finds it processed. Runs are created in their own transactions while the lock is held.
    await db.$transaction(
      async (tx) => {
        const locked = await tx.$queryRaw<Array<{ processedAt: Date | null }>>`SELECT "processedAt" FROM "WebhookDelivery" WHERE id = ${entry.id}::uuid FOR UPDATE`;
        if (!locked[0] || locked[0].processedAt) return;
        await this.startRuns(webhook, entry, log, tx);
      },
      { timeout: 120_000, maxWait: 120_000 },
    );
  };

  private async record(webhook: Webhook, message: DeliveryMessage, position: DeliveryPosition): Promise<WebhookDelivery> {
    const { db } = this.deps;
    const sourcePosition = `${position.topic}:${position.partition}:${position.offset}`;
    const previous = await db.webhookDelivery.findUnique({ where: { sourcePosition } });
    if (previous) return previous;

    const accepted = message.label === 'Accepted';
    const base = {
      webhookId: webhook.id,
      deliveryId: message.deliveryId,
      identitySource: message.identitySource,
      sizeBytes: message.sizeBytes,
      sourcePosition,
      receivedAt: new Date(message.receivedAt),
    };
    const row: Prisma.WebhookDeliveryCreateManyInput = {
      ...base,
      id: newUuid(),
      label: message.label,
      acceptedDeliveryId: accepted ? message.deliveryId : null,
      payload: accepted && message.bodyBase64 !== undefined ? new Uint8Array(Buffer.from(message.bodyBase64, 'base64')) : null,
      reason: message.reason ?? null,
      // Rejected and duplicate entries need no processing.
      processedAt: accepted ? null : new Date(),
    };
    // ON CONFLICT DO NOTHING: a conflict is either this very message (a concurrent consumer) or the delivery ID
    // already accepted by an earlier message.
    const inserted = await db.webhookDelivery.createMany({ data: [row], skipDuplicates: true });
    if (inserted.count === 0) {
      const same = await db.webhookDelivery.findUnique({ where: { sourcePosition } });
      if (same) return same;
      await db.webhookDelivery.createMany({
        data: [{ ...base, id: newUuid(), label: 'Duplicate', reason: 'delivery ID already accepted', processedAt: new Date() }],
        skipDuplicates: true,
      });
      this.deps.logger.info({ deliveryId: message.deliveryId, webhookUid: webhook.id }, 'Duplicate delivery detected by the orchestrator');
    }
    return db.webhookDelivery.findUniqueOrThrow({ where: { sourcePosition } });
  }

  private async startRuns(webhook: Webhook, entry: WebhookDelivery, log: Logger, tx: Prisma.TransactionClient): Promise<void> {
    const { db } = this.deps;
    const body = Buffer.from(entry.payload ?? new Uint8Array());
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      // The ingress only accepts valid JSON; a payload that is not is a bug upstream: record it and start nothing.
      await this.finish(tx, entry, [], [], log);
      log.error('accepted delivery without a JSON payload');
      return;
    }
    // Enabled automations of the webhook's team whose trigger selects this webhook, evaluated now.
    const automations = await db.automation.findMany({
      where: { teamId: webhook.teamId, enabled: true, webhookIds: { has: webhook.id } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const outcomes: AutomationOutcome[] = [];
    const runIds: string[] = [];
    for (const automation of automations) {
      const outcome = await this.evaluate(automation, webhook, entry, payload, body, log);
      outcomes.push(outcome);
      if (outcome.run_id) runIds.push(outcome.run_id);
    }
    await this.finish(tx, entry, outcomes, runIds, log);
  }

  private async evaluate(automation: Automation, webhook: Webhook, entry: WebhookDelivery, payload: unknown, body: Buffer, log: Logger): Promise<AutomationOutcome> {
    const base = { automation_id: automation.id, automation_name: automation.name };
    const trigger = parseWebhookTrigger(automation.trigger);
    if (!trigger.ok) return { ...base, matched: false, error: `invalid trigger: ${trigger.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}` };
    const evaluation = evaluateFilter(trigger.trigger.filter.payload, payload);
    if (!evaluation.matched) {
      return { ...base, matched: false, mismatches: evaluation.mismatches, ...('error' in evaluation && { error: evaluation.error }) };
    }
    const metadata = { automation_id: automation.id, webhook_uid: webhook.id, delivery_id: entry.deliveryId };
    const existing = await this.deps.db.$queryRaw<Array<{ id: string }>>`
      SELECT id::text AS id FROM "Run" WHERE "teamId" = ${webhook.teamId} AND metadata @> ${JSON.stringify(metadata)}::jsonb LIMIT 1`;
    if (existing[0]) return { ...base, matched: true, run_id: existing[0].id };
    const caller: Caller__Output = {
      team_id: automation.teamId,
      principal_type: 'USER',
      principal_id: automation.createdById,
      role: 'ADMIN',
      api_key_id: '',
      run_id: '',
      display_name: '',
      email: '',
    };
    try {
      const { runId } = await this.deps.startRun(caller, {
        prompt: webhookRunPrompt({
          prompt: automation.prompt,
          webhookName: webhook.name,
          webhookUid: webhook.id,
          deliveryId: entry.deliveryId,
          receivedAt: entry.receivedAt,
        }),
        title: `${automation.name}: ${webhook.name} delivery`,
        config: (automation.agentConfig ?? {}) as Record<string, unknown>,
        metadata,
        attachments: [{ fileName: EVENT_PAYLOAD_FILE, mimeType: 'application/json', data: body }],
        source: runSourceFor(webhook),
      });
      log.info({ automationId: automation.id, runId }, 'automation started a run');
      return { ...base, matched: true, run_id: runId };
    } catch (err) {
      // A run the automation's own configuration makes impossible is recorded, not retried forever.
      if (err instanceof AppError && err.code !== 'internal_error' && err.code !== 'resource_unavailable') {
        log.warn({ automationId: automation.id, err: err.message }, 'automation could not start a run');
        return { ...base, matched: true, error: `${err.code}: ${err.message}` };
      }
      throw err;
    }
  }

  private async finish(tx: Prisma.TransactionClient, entry: WebhookDelivery, outcomes: AutomationOutcome[], runIds: string[], log: Logger): Promise<void> {
    await tx.webhookDelivery.updateMany({
      where: { id: entry.id },
      data: { processedAt: new Date(), outcome: outcomes as unknown as Prisma.InputJsonValue, runIds },
    });
    log.debug({ runs: runIds.length, automations: outcomes.length }, 'delivery processed');
  }
}
