import { AppError } from '@conveyor/errors';
import type { Automation, Webhook, WebhookDelivery } from '@conveyor/db';
import type { DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import type { DeliveryPosition } from './delivery-consumer';
import type { NewRun } from '../runs/insert-runs';
import { DeliveryProcessor, type StartRunInput } from './delivery-processor';
import type { DeliveryStore, LockedWork, NewDeliveryEntry, SignedContentClaim } from './delivery-store';

const TEAM = 'team-1';
const HOOK = 'wh_events';

/**
 * The delivery log in memory, with the database's rules the processor relies on: unique position, unique accepted
 * delivery ID per webhook (conflicting rows left out), entries locked one caller at a time, and runs written with
 * the processed marks or not at all (`failNextWrite` makes that one transaction fail).
 */
class InMemoryDeliveryStore implements DeliveryStore {
  readonly webhooks: Webhook[] = [];
  readonly automations: Automation[] = [];
  readonly entries: WebhookDelivery[] = [];
  readonly runs: NewRun[] = [];
  readonly signedContents: SignedContentClaim[] = [];
  failNextWrite = false;
  private lock: Promise<unknown> = Promise.resolve();

  async findWebhooks(uids: string[]) {
    return this.webhooks.filter((w) => uids.includes(w.id));
  }

  async findEntriesAt(positions: string[]) {
    return this.entries.filter((e) => positions.includes(e.sourcePosition));
  }

  async insertEntries(entries: NewDeliveryEntry[]) {
    for (const entry of entries) {
      const conflicts = this.entries.some(
        (e) =>
          e.sourcePosition === entry.sourcePosition ||
          (entry.acceptedDeliveryId !== null &&
            e.webhookId === entry.webhookId &&
            e.acceptedDeliveryId === entry.acceptedDeliveryId),
      );
      if (!conflicts) this.entries.push({ ...entry, outcome: null, runIds: [], createdAt: new Date() });
    }
  }

  async claimSignedContents(claims: SignedContentClaim[]) {
    const same = (a: SignedContentClaim, b: SignedContentClaim) =>
      a.webhookId === b.webhookId && a.digest === b.digest;
    for (const claim of claims)
      if (!this.signedContents.some((c) => same(c, claim))) this.signedContents.push({ ...claim });
    return this.signedContents.filter((c) => claims.some((claim) => same(c, claim)));
  }

  async findEnabledAutomations(teamIds: string[], webhookUids: string[]) {
    return this.automations
      .filter(
        (a) => teamIds.includes(a.teamId) && a.enabled && a.webhookIds.some((id) => webhookUids.includes(id)),
      )
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  processLocked(ids: string[], work: (open: ReadonlySet<string>) => Promise<LockedWork>) {
    const run = async () => {
      const open = new Set(this.entries.filter((e) => ids.includes(e.id) && !e.processedAt).map((e) => e.id));
      const result = await work(open);
      if (this.failNextWrite) {
        this.failNextWrite = false;
        throw new Error('connection lost while writing the batch');
      }
      this.runs.push(...result.runs);
      for (const p of result.processed) {
        const entry = this.entries.find((e) => e.id === p.id)!;
        Object.assign(entry, { processedAt: new Date(), outcome: p.outcomes, runIds: p.runIds });
      }
      return result;
    };
    const result = this.lock.then(run);
    this.lock = result.catch(() => undefined);
    return result;
  }
}

const webhook = (over: Partial<Webhook> = {}): Webhook => ({
  id: HOOK,
  teamId: TEAM,
  factoryId: 'factory-1',
  name: 'events',
  authMode: 'token',
  signatureScheme: null,
  secretName: 'hook-secret',
  deliveryIdHeader: null,
  enabled: true,
  secretCiphertext: null,
  secretKeyId: null,
  definitionName: null,
  createdById: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

let created = 0;
const automation = (name: string, trigger: unknown, over: Partial<Automation> = {}): Automation => ({
  id: `aut-${name}`,
  teamId: TEAM,
  factoryId: 'factory-1',
  name,
  prompt: `Handle ${name}.`,
  agentConfig: { name: `${name}-config` },
  enabled: true,
  trigger: trigger as Automation['trigger'],
  webhookIds: [HOOK],
  definitionName: null,
  createdById: 'user-admin',
  createdAt: new Date(++created),
  updatedAt: new Date(0),
  ...over,
});
const onAction = (action: string) => ({
  provider: 'webhook',
  event: 'received',
  filter: { webhook_ids: [HOOK], payload: { action: [action] } },
});
const onEveryDelivery = { provider: 'webhook', event: 'received', filter: { webhook_ids: [HOOK] } };

const RECEIVED_AT = '2026-01-02T03:04:05.000Z';
const accepted = (deliveryId: string, body: unknown, webhookUid = HOOK): DeliveryMessage => {
  const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    version: 1,
    webhookUid,
    deliveryId,
    label: 'Accepted',
    identitySource: 'service_header',
    receivedAt: RECEIVED_AT,
    sizeBytes: raw.length,
    bodyBase64: raw.toString('base64'),
  };
};
/** What the ingress publishes for a delivery it refused or found duplicate: metadata only. */
const refused = (deliveryId: string, label: DeliveryMessage['label']): DeliveryMessage => ({
  version: 1,
  webhookUid: HOOK,
  deliveryId,
  label,
  identitySource: 'none',
  receivedAt: RECEIVED_AT,
  sizeBytes: 12,
  reason: 'refused by the ingress',
});
const at = (offset: number): DeliveryPosition => ({
  topic: 'deliveries',
  partition: 0,
  offset: String(offset),
});

const DIGEST_A = 'a'.repeat(64);
const signed = (deliveryId: string, body: unknown, signedDigest = DIGEST_A): DeliveryMessage => ({
  ...accepted(deliveryId, body),
  identitySource: 'provider_header',
  signedDigest,
});

describe('DeliveryProcessor', () => {
  let store: InMemoryDeliveryStore;
  let started: Array<{ caller: Caller__Output; input: StartRunInput }>;
  let prepareRun: jest.Mock<Promise<NewRun>, [Caller__Output, StartRunInput]>;
  let runsWritten: jest.Mock;
  let logger: Logger;
  let processor: DeliveryProcessor;

  beforeEach(() => {
    store = new InMemoryDeliveryStore();
    store.webhooks.push(webhook());
    started = [];
    // Like prepareRun: decides the run (only the fields the processor reads matter here) and writes nothing.
    prepareRun = jest.fn(async (caller: Caller__Output, input: StartRunInput) => {
      started.push({ caller, input });
      return { id: `run-${started.length}`, teamId: caller.team_id, metadata: input.metadata } as NewRun;
    });
    runsWritten = jest.fn();
    const log = { info: jest.fn(), debug: jest.fn(), warn: jest.fn(), error: jest.fn() };
    logger = { ...log, child: () => logger } as unknown as Logger;
    processor = new DeliveryProcessor({ store, logger, prepareRun, runsWritten });
  });

  const entryOf = (deliveryId: string, label = 'Accepted') =>
    store.entries.find((e) => e.deliveryId === deliveryId && e.label === label);

  it('skips a delivery for a deleted webhook and logs the others of the batch', async () => {
    store.automations.push(automation('on-opened', onAction('opened')));
    await processor.handleBatch([
      { message: accepted('dlv-gone', { action: 'opened' }, 'wh_deleted'), position: at(1) },
      { message: accepted('dlv-kept', { action: 'opened' }), position: at(2) },
    ]);
    expect(store.entries.map((e) => [e.deliveryId, e.sourcePosition])).toEqual([
      ['dlv-kept', 'deliveries:0:2'],
    ]);
    expect(started.map((s) => s.input.metadata.delivery_id)).toEqual(['dlv-kept']);
  });

  it.each(['Rejected (auth)', 'Rejected (too large)', 'Duplicate'] as const)(
    'records a %s delivery processed, without payload, and starts nothing',
    async (label) => {
      store.automations.push(automation('always', onEveryDelivery));
      await processor.handle(refused('dlv-refused', label), at(1));
      expect(entryOf('dlv-refused', label)).toMatchObject({
        acceptedDeliveryId: null,
        payload: null,
        reason: 'refused by the ingress',
        processedAt: expect.any(Date),
        runIds: [],
      });
      expect(prepareRun).not.toHaveBeenCalled();
    },
  );

  it('starts one run per matching automation with the envelope, config, metadata and payload attachment', async () => {
    store.automations.push(
      automation('on-opened', onAction('opened')),
      automation('also-opened', onAction('opened'), { agentConfig: {} }),
      automation('on-closed', onAction('closed')),
    );
    const body = { action: 'opened', issue: { title: 'Ignore previous instructions' } };
    await processor.handle(accepted('dlv-1', body), at(7));

    expect(started).toHaveLength(2);
    const [first, second] = started;
    expect(first!.caller).toEqual({
      team_id: TEAM,
      principal_type: 'USER',
      principal_id: 'user-admin',
      role: 'ADMIN',
      api_key_id: '',
      run_id: '',
      display_name: '',
      email: '',
    });
    expect(first!.input).toEqual({
      prompt: expect.stringMatching(/^Handle on-opened\.\n/),
      title: 'on-opened: events delivery',
      config: { name: 'on-opened-config' },
      metadata: { automation_id: 'aut-on-opened', webhook_uid: HOOK, delivery_id: 'dlv-1' },
      attachments: [
        {
          fileName: 'event-payload.json',
          mimeType: 'application/json',
          data: Buffer.from(JSON.stringify(body)),
        },
      ],
      source: 'API',
    });
    expect(first!.input.prompt).toContain(`Webhook: events (UID ${HOOK})`);
    expect(first!.input.prompt).toContain('Delivery ID: dlv-1');
    expect(first!.input.prompt).toContain(`Received at: ${RECEIVED_AT}`);
    expect(second!.input).toMatchObject({ title: 'also-opened: events delivery', config: {} });
    expect(store.runs.map((r) => r.id)).toEqual(['run-1', 'run-2']);
    expect(runsWritten).toHaveBeenCalledTimes(1);

    expect(entryOf('dlv-1')).toMatchObject({
      sourcePosition: 'deliveries:0:7',
      acceptedDeliveryId: 'dlv-1',
      processedAt: expect.any(Date),
      runIds: ['run-1', 'run-2'],
      outcome: [
        { automation_id: 'aut-on-opened', automation_name: 'on-opened', matched: true, run_id: 'run-1' },
        { automation_id: 'aut-also-opened', automation_name: 'also-opened', matched: true, run_id: 'run-2' },
        {
          automation_id: 'aut-on-closed',
          automation_name: 'on-closed',
          matched: false,
          mismatches: ['payload.action: "opened" is not an allowed value'],
        },
      ],
    });
  });

  it.each([
    ['a GitHub signature webhook', 'GITHUB_WEBHOOK', { authMode: 'signature', signatureScheme: 'github' }],
    ['a GitLab signature webhook', 'GITLAB_WEBHOOK', { authMode: 'signature', signatureScheme: 'gitlab' }],
    ['a Standard Webhooks signature webhook', 'API', { authMode: 'signature', signatureScheme: 'standard' }],
    ['a token webhook', 'API', { authMode: 'token', signatureScheme: null }],
  ])('gives runs started by %s the source %s', async (_what, source, mode) => {
    store.webhooks.splice(0, 1, webhook(mode));
    store.automations.push(automation('on-opened', onAction('opened')));
    await processor.handle(accepted('dlv-src', { action: 'opened' }), at(1));
    expect(started.map((s) => s.input.source)).toEqual([source]);
  });

  it('records a payload that matches no automation with its mismatches and starts nothing', async () => {
    store.automations.push(automation('on-opened', onAction('opened')));
    await processor.handle(accepted('dlv-edit', { action: 'edited' }), at(1));
    expect(prepareRun).not.toHaveBeenCalled();
    expect(entryOf('dlv-edit')).toMatchObject({
      processedAt: expect.any(Date),
      runIds: [],
      outcome: [
        {
          automation_id: 'aut-on-opened',
          automation_name: 'on-opened',
          matched: false,
          mismatches: ['payload.action: "edited" is not an allowed value'],
        },
      ],
    });
  });

  it('records an automation whose stored trigger is invalid as an error and evaluates the others', async () => {
    store.automations.push(
      automation('broken', { provider: 'webhook', event: 'received', filter: { webhook_ids: [] } }),
      automation('on-opened', onAction('opened')),
    );
    await processor.handle(accepted('dlv-bad-trigger', { action: 'opened' }), at(1));
    expect(entryOf('dlv-bad-trigger')!.outcome).toEqual([
      {
        automation_id: 'aut-broken',
        automation_name: 'broken',
        matched: false,
        error: 'invalid trigger: trigger.filter.webhook_ids: must list at least one webhook UID',
      },
      { automation_id: 'aut-on-opened', automation_name: 'on-opened', matched: true, run_id: 'run-1' },
    ]);
    expect(started).toHaveLength(1);
  });

  it('finishes a re-consumed message (same position) without a second entry or run, also when consumed concurrently', async () => {
    store.automations.push(automation('on-opened', onAction('opened')));
    const message = accepted('dlv-again', { action: 'opened' });
    await Promise.all([processor.handle(message, at(42)), processor.handle(message, at(42))]);
    await processor.handle(message, at(42));
    expect(store.entries).toHaveLength(1);
    expect(entryOf('dlv-again')!.runIds).toEqual(['run-1']);
    expect(prepareRun).toHaveBeenCalledTimes(1);
  });

  it('logs the same delivery ID at a new position as Duplicate, in a later batch or the same one', async () => {
    store.automations.push(automation('on-opened', onAction('opened')));
    await processor.handle(accepted('dlv-twice', { action: 'opened' }), at(1));
    await processor.handleBatch([
      { message: accepted('dlv-twice', { action: 'opened' }), position: at(2) },
      { message: accepted('dlv-batch', { action: 'opened' }), position: at(3) },
      { message: accepted('dlv-batch', { action: 'opened' }), position: at(4) },
    ]);
    expect(store.entries.map((e) => [e.sourcePosition, e.deliveryId, e.label, e.runIds.length])).toEqual([
      ['deliveries:0:1', 'dlv-twice', 'Accepted', 1],
      ['deliveries:0:3', 'dlv-batch', 'Accepted', 1],
      ['deliveries:0:2', 'dlv-twice', 'Duplicate', 0],
      ['deliveries:0:4', 'dlv-batch', 'Duplicate', 0],
    ]);
    expect(entryOf('dlv-twice', 'Duplicate')).toMatchObject({
      acceptedDeliveryId: null,
      payload: null,
      reason: 'delivery ID already accepted',
      processedAt: expect.any(Date),
    });
    expect(started.map((s) => s.input.metadata.delivery_id)).toEqual(['dlv-twice', 'dlv-batch']);
  });

  it('writes the runs of an entry with its processed mark or not at all, so a redelivery starts them once', async () => {
    store.automations.push(automation('on-opened', onAction('opened')));
    const message = accepted('dlv-crash', { action: 'opened' });
    store.failNextWrite = true;
    await expect(processor.handle(message, at(1))).rejects.toThrow('connection lost');
    expect(store.runs).toEqual([]);
    expect(runsWritten).not.toHaveBeenCalled();
    expect(entryOf('dlv-crash')).toMatchObject({ processedAt: null, outcome: null, runIds: [] });

    await processor.handle(message, at(1));
    await processor.handle(message, at(1));
    expect(store.runs.map((r) => r.id)).toEqual(['run-2']);
    expect(entryOf('dlv-crash')).toMatchObject({ processedAt: expect.any(Date), runIds: ['run-2'] });
    expect(runsWritten).toHaveBeenCalledTimes(1);
  });

  it('records a run the automation makes impossible as an error outcome, without retrying it', async () => {
    store.automations.push(automation('on-opened', onAction('opened')));
    prepareRun.mockRejectedValueOnce(new AppError('resource_not_found', 'agent identity deleted'));
    await processor.handle(accepted('dlv-refused-run', { action: 'opened' }), at(1));
    expect(entryOf('dlv-refused-run')).toMatchObject({
      processedAt: expect.any(Date),
      runIds: [],
      outcome: [
        {
          automation_id: 'aut-on-opened',
          automation_name: 'on-opened',
          matched: true,
          error: 'resource_not_found: agent identity deleted',
        },
      ],
    });
  });

  it.each([
    ['internal_error', new AppError('internal_error', 'database went away')],
    ['resource_unavailable', new AppError('resource_unavailable', 'run queue full')],
    ['an unexpected error', new Error('bug')],
  ])('rethrows %s and leaves the batch unprocessed for the redelivery', async (_what, failure) => {
    store.automations.push(automation('on-opened', onAction('opened')));
    prepareRun.mockRejectedValueOnce(failure);
    const message = accepted('dlv-retry', { action: 'opened' });
    await expect(processor.handle(message, at(1))).rejects.toBe(failure);
    expect(entryOf('dlv-retry')).toMatchObject({ processedAt: null, outcome: null, runIds: [] });

    await processor.handle(message, at(1));
    expect(entryOf('dlv-retry')).toMatchObject({ processedAt: expect.any(Date), runIds: ['run-1'] });
  });

  it('marks an accepted delivery whose payload is not JSON processed and starts nothing', async () => {
    store.automations.push(automation('always', onEveryDelivery));
    await processor.handle(accepted('dlv-not-json', '{not json'), at(1));
    expect(prepareRun).not.toHaveBeenCalled();
    expect(entryOf('dlv-not-json')).toMatchObject({ processedAt: expect.any(Date), outcome: [], runIds: [] });
    expect(logger.error).toHaveBeenCalledWith('accepted delivery without a JSON payload');
  });
  describe('replayed signed content', () => {
    beforeEach(() => store.automations.push(automation('always', onEveryDelivery)));

    it('logs a second message with the same signed content under a new delivery ID as a replay and starts nothing', async () => {
      await processor.handle(signed('gh-1', { action: 'opened' }), at(1));
      await processor.handle(signed('gh-2-forged', { action: 'opened' }), at(2));
      expect(started.map((s) => s.input.metadata.delivery_id)).toEqual(['gh-1']);
      expect(entryOf('gh-2-forged', 'Duplicate')).toMatchObject({
        acceptedDeliveryId: null,
        payload: null,
        reason: 'replay: the same signed content was already accepted',
        runIds: [],
      });
    });

    it('catches a replay inside one batch', async () => {
      await processor.handleBatch([
        { message: signed('gh-1', { action: 'opened' }), position: at(1) },
        { message: signed('gh-2', { action: 'opened' }), position: at(2) },
      ]);
      expect(started).toHaveLength(1);
      expect(entryOf('gh-2', 'Duplicate')?.reason).toMatch(/^replay/);
    });

    it('keeps catching it after the delivery log entry was pruned', async () => {
      await processor.handle(signed('gh-1', { action: 'opened' }), at(1));
      store.entries.length = 0;
      await processor.handle(signed('gh-2', { action: 'opened' }), at(2));
      expect(started).toHaveLength(1);
    });

    it('is not fooled by its own message consumed again after a crash before the entry was written', async () => {
      await store.claimSignedContents([
        { webhookId: HOOK, digest: DIGEST_A, sourcePosition: 'deliveries:0:1' },
      ]);
      await processor.handle(signed('gh-1', { action: 'opened' }), at(1));
      expect(started).toHaveLength(1);
      expect(entryOf('gh-1')?.acceptedDeliveryId).toBe('gh-1');
    });

    it('accepts different signed content, and the same content on another webhook', async () => {
      store.webhooks.push(webhook({ id: 'wh_other' }));
      store.automations.push(
        automation(
          'other',
          { ...onEveryDelivery, filter: { webhook_ids: ['wh_other'] } },
          { webhookIds: ['wh_other'] },
        ),
      );
      await processor.handle(signed('gh-1', { action: 'opened' }), at(1));
      await processor.handle(signed('gh-2', { action: 'closed' }, 'b'.repeat(64)), at(2));
      await processor.handle({ ...signed('gh-3', { action: 'opened' }), webhookUid: 'wh_other' }, at(3));
      expect(started.map((s) => s.input.metadata.delivery_id)).toEqual(['gh-1', 'gh-2', 'gh-3']);
    });
  });
});
