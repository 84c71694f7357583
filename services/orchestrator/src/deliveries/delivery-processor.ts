import { AppError } from '@conveyor/errors';
import { newUuid, type Automation, type Webhook, type WebhookDelivery } from '@conveyor/db';
import { DUPLICATE_REASONS, type DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { contextFromCarrier, inSpan, type TraceCarrier } from '@conveyor/tracing';
import pLimit from 'p-limit';
import type { Caller } from '../auth/caller';
import { describeErrors, matchTriggerPayload, parseWebhookTrigger } from '../automations/automation-trigger';
import { EVENT_PAYLOAD_FILE, webhookRunPrompt } from '../automations/run-envelope';
import type { ConsumedDelivery, DeliveryPosition } from './delivery-consumer';
import type { NewRun } from '../runs/insert-runs';
import type { AutomationOutcome, DeliveryStore, NewDeliveryEntry } from './delivery-store';

/** Deliveries of one batch whose automations are evaluated (and runs prepared) at the same time. */
const RUN_START_CONCURRENCY = 4;

export interface StartRunInput {
  prompt: string;
  title: string;
  config: Record<string, unknown>;
  metadata: Record<string, string>;
  attachments: Array<{ fileName: string; mimeType: string; data: Buffer }>;
  source: string;
}

/**
 * Decides and checks one run without writing it (runs/create-run.ts prepareRun in production): the store writes the
 * runs of a batch together with the entries that started them.
 */
export type PrepareRun = (caller: Caller, input: StartRunInput) => Promise<NewRun>;

/** What an integration owning the delivery's webhook (a GitHub App) asks of it, besides the automations. */
export interface IntegrationWork {
  outcomes: AutomationOutcome[];
  runs: NewRun[];
  /** Done once the delivery is marked processed (follow-ups of existing runs, which have their own transaction). */
  after?: () => Promise<void>;
}

export type IntegrationEvaluator = (
  webhook: Webhook,
  entry: WebhookDelivery,
  payload: unknown,
  body: Buffer,
  log: Logger,
) => Promise<IntegrationWork>;

export interface DeliveryProcessorDeps {
  store: DeliveryStore;
  logger: Logger;
  prepareRun: PrepareRun;
  /** Integrations whose webhooks these are (integrations/github-app-runs.ts in production). */
  integrations?: IntegrationEvaluator;
  /** Called once runs were written, to relay their outbox entries right away. */
  runsWritten: () => void;
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
 *   accepting the same ID (a retry after an unclear 503) is logged Duplicate and starts nothing;
 * - one signed message is Accepted at most once per webhook, for as long as the webhook exists (its digest claimed
 *   in WebhookSignedContent), so a replay under a new delivery header is logged Duplicate and starts nothing.
 * The runs an entry starts commit in the same transaction as the entry's processed mark, so an entry is either open
 * with no runs or processed with all of them: a crash in between never starts a run twice nor loses one.
 */
export class DeliveryProcessor {
  constructor(private readonly deps: DeliveryProcessorDeps) {}

  /** One message (tests and replays); the consumer hands over whole batches. */
  readonly handle = (message: DeliveryMessage, position: DeliveryPosition): Promise<void> =>
    this.handleBatch([{ message, position }]);

  /**
   * A batch costs a fixed number of statements, whatever its size and the runs it starts: the log (one lookup of
   * the webhooks, one multi-row insert, the reads around it), the automations, and one transaction that locks the
   * entries, writes all their runs and marks them processed.
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
    // The automations are read while the entries are written: both need only the webhooks.
    const automations = known.some((d) => d.message.label === 'Accepted')
      ? this.enabledAutomations(known, webhooks)
      : Promise.resolve([]);
    const [entries] = await Promise.all([this.record(known, webhooks), automations]);
    const pending = entries.filter((e) => e.label === 'Accepted' && !e.processedAt);
    if (pending.length === 0) return;
    const traces = new Map(known.map((d) => [positionOf(d), d.trace]));
    await this.process(pending, webhooks, await automations, traces);
  };

  /** Enabled automations of each webhook's team whose trigger selects the webhook, evaluated now. */
  private enabledAutomations(
    deliveries: ConsumedDelivery[],
    webhooks: Map<string, Webhook>,
  ): Promise<Automation[]> {
    const hooks = [...new Set(deliveries.map((d) => d.message.webhookUid))].map((uid) => webhooks.get(uid)!);
    return this.deps.store.findEnabledAutomations(
      [...new Set(hooks.map((w) => w.teamId))],
      hooks.map((w) => w.id),
    );
  }

  /** The log entry of every delivery, written once per Kafka message (a re-consumed message finds its entry). */
  private async record(
    deliveries: ConsumedDelivery[],
    webhooks: Map<string, Webhook>,
  ): Promise<WebhookDelivery[]> {
    const { store, logger } = this.deps;
    const byPosition = new Map<string, WebhookDelivery>();
    const load = async (positions: string[]) => {
      for (const entry of await store.findEntriesAt(positions)) byPosition.set(entry.sourcePosition, entry);
    };
    const base = (d: ConsumedDelivery) => ({
      webhookId: webhooks.get(d.message.webhookUid)!.id,
      deliveryId: d.message.deliveryId,
      identitySource: d.message.identitySource,
      sizeBytes: d.message.sizeBytes,
      sourcePosition: positionOf(d),
      receivedAt: new Date(d.message.receivedAt),
    });
    const replays = await this.replays(deliveries, webhooks, positionOf);
    const rows: NewDeliveryEntry[] = deliveries.map((d) => {
      const { message } = d;
      const replay = replays.has(positionOf(d));
      const accepted = message.label === 'Accepted' && !replay;
      return {
        ...base(d),
        id: newUuid(),
        label: replay ? 'Duplicate' : message.label,
        acceptedDeliveryId: accepted ? message.deliveryId : null,
        payload:
          accepted && message.bodyBase64 !== undefined
            ? new Uint8Array(Buffer.from(message.bodyBase64, 'base64'))
            : null,
        reason: replay ? DUPLICATE_REASONS.signed_content : (message.reason ?? null),
        // Rejected and duplicate entries need no processing.
        processedAt: accepted ? null : new Date(),
      };
    });
    // Inserted first and read back after, two statements for the common case. A row left out conflicted either on
    // its position (written before: a re-consumed message, or a concurrent consumer) and is read back by it, or on
    // its delivery ID, already accepted by an earlier message (also earlier in this batch): a Duplicate.
    await store.insertEntries(rows);
    await load(deliveries.map(positionOf));
    const duplicates = deliveries.filter((d) => !byPosition.has(positionOf(d)));
    if (duplicates.length > 0) {
      await store.insertEntries(
        duplicates.map((d) => ({
          ...base(d),
          id: newUuid(),
          label: 'Duplicate',
          acceptedDeliveryId: null,
          payload: null,
          reason: DUPLICATE_REASONS.delivery_id,
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
    return deliveries.map((d) => {
      const entry = byPosition.get(positionOf(d));
      if (!entry) throw new Error(`delivery log entry for ${positionOf(d)} not found after writing it`);
      return entry;
    });
  }

  /**
   * The positions of accepted messages whose signed content another message of the webhook claimed first: replays.
   * A message consumed again finds its own claim and is not one.
   */
  private async replays(
    deliveries: ConsumedDelivery[],
    webhooks: Map<string, Webhook>,
    positionOf: (d: ConsumedDelivery) => string,
  ): Promise<Set<string>> {
    const claims = deliveries.flatMap((d) =>
      d.message.label === 'Accepted' && d.message.signedDigest !== undefined
        ? [
            {
              webhookId: webhooks.get(d.message.webhookUid)!.id,
              digest: d.message.signedDigest,
              sourcePosition: positionOf(d),
            },
          ]
        : [],
    );
    if (claims.length === 0) return new Set();
    const owners = new Map(
      (await this.deps.store.claimSignedContents(claims)).map((c) => [
        `${c.webhookId}:${c.digest}`,
        c.sourcePosition,
      ]),
    );
    const replays = claims.filter((c) => owners.get(`${c.webhookId}:${c.digest}`) !== c.sourcePosition);
    for (const c of replays)
      this.deps.logger.warn(
        { webhookUid: c.webhookId, sourcePosition: c.sourcePosition },
        'replayed signed delivery logged Duplicate',
      );
    return new Set(replays.map((c) => c.sourcePosition));
  }

  /**
   * Evaluates the automations of accepted entries and starts their runs. The entries' row locks (taken in id order,
   * so two consumers handed overlapping batches around a rebalance cannot deadlock) serialise the work: the second
   * waits, then finds them processed. Runs are prepared while the locks are held and written with the processed marks.
   */
  private async process(
    entries: WebhookDelivery[],
    webhooks: Map<string, Webhook>,
    automations: Automation[],
    /** Each message's trace by its position: the runs an entry starts continue its delivery's trace. */
    traces: Map<string, TraceCarrier | undefined>,
  ): Promise<void> {
    const { store, logger } = this.deps;
    const automationsOf = (webhook: Webhook) =>
      automations.filter((a) => a.teamId === webhook.teamId && a.webhookIds.includes(webhook.id));
    const limit = pLimit(RUN_START_CONCURRENCY);
    const after: Array<() => Promise<void>> = [];
    const { processed, runs } = await store.processLocked(
      entries.map((e) => e.id),
      async (open) => {
        const results = await Promise.all(
          entries
            .filter((e) => open.has(e.id))
            .map((entry) =>
              limit(async () => {
                const webhook = webhooks.get(entry.webhookId)!;
                const log = logger.child({ deliveryId: entry.deliveryId, webhookUid: webhook.id });
                const { later, ...started } = await inSpan(
                  'webhook delivery',
                  () => this.startRuns(webhook, automationsOf(webhook), entry, log),
                  { parent: contextFromCarrier(traces.get(entry.sourcePosition)) },
                );
                if (later) after.push(later);
                return { id: entry.id, ...started };
              }),
            ),
        );
        return {
          processed: results.map(({ runs, ...entry }) => ({ ...entry, runIds: runs.map((r) => r.id) })),
          runs: results.flatMap((r) => r.runs),
        };
      },
    );
    // Started before the runs are relayed (a check run queued before the claim reports it), awaited after; at most
    // once: a crash before this point loses a follow-up rather than submitting it twice.
    const later = after.map((work) =>
      work().catch((err: unknown) =>
        logger.warn({ err: (err as Error).message }, 'integration work after the delivery failed'),
      ),
    );
    if (runs.length > 0) {
      this.deps.runsWritten();
      for (const run of runs)
        logger.info(
          { deliveryId: run.metadata.delivery_id, automationId: run.metadata.automation_id, runId: run.id },
          'automation started a run',
        );
    }
    if (processed.length > 0)
      logger.debug({ deliveries: processed.length, runs: runs.length }, 'deliveries processed');
    await Promise.all(later);
  }

  private async startRuns(
    webhook: Webhook,
    automations: Automation[],
    entry: WebhookDelivery,
    log: Logger,
  ): Promise<{ outcomes: AutomationOutcome[]; runs: NewRun[]; later?: () => Promise<void> }> {
    const body = Buffer.from(entry.payload ?? new Uint8Array());
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      // The ingress only accepts valid JSON; a payload that is not is a bug upstream: record it and start nothing.
      log.error('accepted delivery without a JSON payload');
      return { outcomes: [], runs: [] };
    }
    const outcomes: AutomationOutcome[] = [];
    const runs: NewRun[] = [];
    for (const automation of automations) {
      const { outcome, run } = await this.evaluate(automation, webhook, entry, payload, body, log);
      outcomes.push(outcome);
      if (run) runs.push(run);
    }
    if (!this.deps.integrations) return { outcomes, runs };
    const integration = await this.deps.integrations(webhook, entry, payload, body, log);
    return {
      outcomes: [...outcomes, ...integration.outcomes],
      runs: [...runs, ...integration.runs],
      ...(integration.after ? { later: integration.after } : {}),
    };
  }

  private async evaluate(
    automation: Automation,
    webhook: Webhook,
    entry: WebhookDelivery,
    payload: unknown,
    body: Buffer,
    log: Logger,
  ): Promise<{ outcome: AutomationOutcome; run?: NewRun }> {
    const base = { automation_id: automation.id, automation_name: automation.name };
    const trigger = parseWebhookTrigger(automation.trigger);
    if (!trigger.ok)
      return {
        outcome: { ...base, matched: false, error: `invalid trigger: ${describeErrors(trigger.errors)}` },
      };
    const evaluation = matchTriggerPayload(trigger.payloadFilter, payload);
    if (!evaluation.matched)
      return { outcome: { ...base, matched: false, mismatches: evaluation.mismatches } };
    const metadata = { automation_id: automation.id, webhook_uid: webhook.id, delivery_id: entry.deliveryId };
    const caller: Caller = {
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
      const run = await this.deps.prepareRun(caller, {
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
      return { outcome: { ...base, matched: true, run_id: run.id }, run };
    } catch (err) {
      // A run the automation's own configuration makes impossible is recorded, not retried forever.
      if (err instanceof AppError && err.code !== 'internal_error' && err.code !== 'resource_unavailable') {
        log.warn({ automationId: automation.id, err: err.message }, 'automation could not start a run');
        return { outcome: { ...base, matched: true, error: `${err.code}: ${err.message}` } };
      }
      throw err;
    }
  }
}

/** A message's place in the log, as its delivery log entry records it (`sourcePosition`). */
const positionOf = (d: ConsumedDelivery): string =>
  `${d.position.topic}:${d.position.partition}:${d.position.offset}`;
