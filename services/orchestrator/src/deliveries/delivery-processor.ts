import { AppError } from '@conveyor/errors';
import { newUuid, type Automation, type Webhook, type WebhookDelivery } from '@conveyor/db';
import type { DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import pLimit from 'p-limit';
import type { Caller__Output } from '@conveyor/proto';
import { describeErrors, matchTriggerPayload, parseWebhookTrigger } from '../automations/automation-trigger';
import { EVENT_PAYLOAD_FILE, webhookRunPrompt } from '../automations/run-envelope';
import type { ConsumedDelivery, DeliveryPosition } from './delivery-consumer';
import type { AutomationOutcome, DeliveryStore, NewDeliveryEntry } from './delivery-store';

/** Deliveries of one batch whose automations are evaluated (and runs started) at the same time. */
const RUN_START_CONCURRENCY = 4;

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

export interface DeliveryProcessorDeps {
  store: DeliveryStore;
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

  /** One message (tests and replays); the consumer hands over whole batches. */
  readonly handle = (message: DeliveryMessage, position: DeliveryPosition): Promise<void> =>
    this.handleBatch([{ message, position }]);

  /**
   * A batch costs a fixed number of statements for the log (one lookup of the webhooks, one multi-row insert, the
   * reads around it) and one transaction for the automations; only the runs themselves are one transaction each.
   */
  readonly handleBatch = async (deliveries: ConsumedDelivery[]): Promise<void> => {
    const { store, logger } = this.deps;
    const uids = [...new Set(deliveries.map((d) => d.message.webhookUid))];
    const webhooks = new Map((await store.findWebhooks(uids)).map((w) => [w.id, w]));
    const known = deliveries.filter((d) => {
      if (webhooks.has(d.message.webhookUid)) return true;
      logger.info(
        {
          deliveryId: d.message.deliveryId,
          webhookUid: d.message.webhookUid,
          label: d.message.label,
          ...d.position,
        },
        'delivery for a deleted webhook skipped',
      );
      return false;
    });
    if (known.length === 0) return;
    const entries = await this.record(known, webhooks);
    const pending = entries.filter((e) => e.label === 'Accepted' && !e.processedAt);
    if (pending.length > 0) await this.process(pending, webhooks);
  };

  /** The log entry of every delivery, written once per Kafka message (a re-consumed message finds its entry). */
  private async record(
    deliveries: ConsumedDelivery[],
    webhooks: Map<string, Webhook>,
  ): Promise<WebhookDelivery[]> {
    const { store, logger } = this.deps;
    const positionOf = (d: ConsumedDelivery) =>
      `${d.position.topic}:${d.position.partition}:${d.position.offset}`;
    const byPosition = new Map<string, WebhookDelivery>();
    const load = async (positions: string[]) => {
      for (const entry of await store.findEntriesAt(positions)) byPosition.set(entry.sourcePosition, entry);
    };
    await load(deliveries.map(positionOf));

    const fresh = deliveries.filter((d) => !byPosition.has(positionOf(d)));
    if (fresh.length > 0) {
      const base = (d: ConsumedDelivery) => ({
        webhookId: webhooks.get(d.message.webhookUid)!.id,
        deliveryId: d.message.deliveryId,
        identitySource: d.message.identitySource,
        sizeBytes: d.message.sizeBytes,
        sourcePosition: positionOf(d),
        receivedAt: new Date(d.message.receivedAt),
      });
      const rows: NewDeliveryEntry[] = fresh.map((d) => {
        const { message } = d;
        const accepted = message.label === 'Accepted';
        return {
          ...base(d),
          id: newUuid(),
          label: message.label,
          acceptedDeliveryId: accepted ? message.deliveryId : null,
          payload:
            accepted && message.bodyBase64 !== undefined
              ? new Uint8Array(Buffer.from(message.bodyBase64, 'base64'))
              : null,
          reason: message.reason ?? null,
          // Rejected and duplicate entries need no processing.
          processedAt: accepted ? null : new Date(),
        };
      });
      // A row left out conflicted either on its position (a concurrent consumer wrote it) or on its delivery ID,
      // already accepted by an earlier message (also earlier in this batch).
      await store.insertEntries(rows);
      await load(fresh.map(positionOf));
      const duplicates = fresh.filter((d) => !byPosition.has(positionOf(d)));
      if (duplicates.length > 0) {
        await store.insertEntries(
          duplicates.map((d) => ({
            ...base(d),
            id: newUuid(),
            label: 'Duplicate',
            acceptedDeliveryId: null,
            payload: null,
            reason: 'delivery ID already accepted',
            processedAt: new Date(),
          })),
        );
        await load(duplicates.map(positionOf));
        for (const d of duplicates)
          logger.info(
            { deliveryId: d.message.deliveryId, webhookUid: d.message.webhookUid },
            'Duplicate delivery detected by the orchestrator',
          );
      }
    }
    return deliveries.map((d) => {
      const entry = byPosition.get(positionOf(d));
      if (!entry) throw new Error(`delivery log entry for ${positionOf(d)} not found after writing it`);
      return entry;
    });
  }

  /**
   * Evaluates the automations of accepted entries and starts their runs. The entries' row locks (taken in id order,
   * so two consumers handed overlapping batches around a rebalance cannot deadlock) serialise the work: the second
   * waits, then finds them processed. Runs are created in their own transactions while the locks are held, and all
   * entries are marked processed at the end.
   */
  private async process(entries: WebhookDelivery[], webhooks: Map<string, Webhook>): Promise<void> {
    const { store, logger } = this.deps;
    const hooks = [...new Set(entries.map((e) => e.webhookId))].map((id) => webhooks.get(id)!);
    // Enabled automations of each webhook's team whose trigger selects the webhook, evaluated now.
    const automations = await store.findEnabledAutomations(
      [...new Set(hooks.map((w) => w.teamId))],
      hooks.map((w) => w.id),
    );
    const automationsOf = (webhook: Webhook) =>
      automations.filter((a) => a.teamId === webhook.teamId && a.webhookIds.includes(webhook.id));
    const limit = pLimit(RUN_START_CONCURRENCY);
    const processed = await store.processLocked(
      entries.map((e) => e.id),
      (open) =>
        Promise.all(
          entries
            .filter((e) => open.has(e.id))
            .map((entry) =>
              limit(async () => {
                const webhook = webhooks.get(entry.webhookId)!;
                const log = logger.child({ deliveryId: entry.deliveryId, webhookUid: webhook.id });
                return {
                  id: entry.id,
                  ...(await this.startRuns(webhook, automationsOf(webhook), entry, log)),
                };
              }),
            ),
        ),
    );
    if (processed.length > 0)
      logger.debug(
        { deliveries: processed.length, runs: processed.reduce((n, p) => n + p.runIds.length, 0) },
        'deliveries processed',
      );
  }

  private async startRuns(
    webhook: Webhook,
    automations: Automation[],
    entry: WebhookDelivery,
    log: Logger,
  ): Promise<{ outcomes: AutomationOutcome[]; runIds: string[] }> {
    const body = Buffer.from(entry.payload ?? new Uint8Array());
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      // The ingress only accepts valid JSON; a payload that is not is a bug upstream: record it and start nothing.
      log.error('accepted delivery without a JSON payload');
      return { outcomes: [], runIds: [] };
    }
    const outcomes: AutomationOutcome[] = [];
    const runIds: string[] = [];
    for (const automation of automations) {
      const outcome = await this.evaluate(automation, webhook, entry, payload, body, log);
      outcomes.push(outcome);
      if (outcome.run_id) runIds.push(outcome.run_id);
    }
    return { outcomes, runIds };
  }

  private async evaluate(
    automation: Automation,
    webhook: Webhook,
    entry: WebhookDelivery,
    payload: unknown,
    body: Buffer,
    log: Logger,
  ): Promise<AutomationOutcome> {
    const base = { automation_id: automation.id, automation_name: automation.name };
    const trigger = parseWebhookTrigger(automation.trigger);
    if (!trigger.ok)
      return { ...base, matched: false, error: `invalid trigger: ${describeErrors(trigger.errors)}` };
    const evaluation = matchTriggerPayload(trigger.payloadFilter, payload);
    if (!evaluation.matched) return { ...base, matched: false, mismatches: evaluation.mismatches };
    const metadata = { automation_id: automation.id, webhook_uid: webhook.id, delivery_id: entry.deliveryId };
    const existing = await this.deps.store.findRunByMetadata(webhook.teamId, metadata);
    if (existing) return { ...base, matched: true, run_id: existing };
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
}
