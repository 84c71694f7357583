import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { startExtraService, type ExtraService } from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { webhookApi } from './webhook-helpers';

// A killed consumer's partitions move to the other replica after the group's session timeout (30 s).
jest.setTimeout(240_000);

const DELIVERIES = 600;
/** Deliveries are keyed by webhook: several webhooks spread them over the topic's partitions, so both replicas work. */
const WEBHOOKS = 9;

const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 150_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

describe('webhook deliveries survive an orchestrator killed mid-consume', () => {
  let platform: RunningPlatform;
  let second: ExtraService;
  let db: PrismaClient;

  beforeAll(async () => {
    platform = await startPlatform({ env: { DELIVERY_RATE_PER_MINUTE: '100000' }, withRunner: false });
    db = createPrismaClient(platform.databaseUrl);
  });

  afterAll(async () => {
    await db?.$disconnect();
    await second?.stop();
    await platform?.stop();
  });

  it('with one of two orchestrators SIGKILLed while consuming, every accepted delivery starts exactly one run', async () => {
    const w = webhookApi(platform);
    const factoryId = await w.factory('durability');
    const hooks: Array<Awaited<ReturnType<typeof w.webhook>>> = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      const hook = await w.webhook(factoryId, { name: `hook-${i}` });
      const automation = await w.api('POST', `/factories/${factoryId}/automations`, {
        name: `on-every-delivery-${i}`,
        prompt: 'Handle the delivery.',
        trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.webhook_uid] } },
      });
      expect(automation.status).toBe(201);
      hooks.push(hook);
    }
    // A second replica in the same consumer group: the partitions are shared between the two.
    second = await startExtraService(platform, 'orchestrator');
    await until('the second orchestrator to be ready', async () => (await fetch(`${second.url}/readyz`)).ok);

    const recorded = async () => db.webhookDelivery.count({ where: { label: 'Accepted' } });
    const send = async (n: number): Promise<void> => {
      const hook = hooks[n % WEBHOOKS]!;
      // A sender retries until the delivery is accepted (a 503 while the ingress could not reach Kafka or Redis).
      for (;;) {
        const res = await fetch(hook.ingress_url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${hook.secret!}`,
            'content-type': 'application/json',
            'x-service-delivery-id': `delivery-${n}`,
          },
          body: JSON.stringify({ n }),
        });
        if (res.status === 202) return;
        expect(res.status).toBe(503);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const sending = (async () => {
      for (let n = 0; n < DELIVERIES; n += 20)
        await Promise.all(Array.from({ length: 20 }, (_, i) => send(n + i)));
    })();
    // Killed while consuming: once a third of the deliveries are in the log, the platform's orchestrator is gone
    // without a graceful shutdown, whatever chunk it was in the middle of.
    await until('a third of the deliveries to be recorded', async () => (await recorded()) >= DELIVERIES / 3);
    platform.kill('orchestrator', 'SIGKILL');
    await sending;

    await until(
      'every accepted delivery to be processed',
      async () =>
        (await db.webhookDelivery.count({ where: { label: 'Accepted', processedAt: { not: null } } })) ===
        DELIVERIES,
    );
    const accepted = await db.webhookDelivery.findMany({
      where: { label: 'Accepted' },
      select: { deliveryId: true, runIds: true },
    });
    expect(new Set(accepted.map((a) => a.deliveryId)).size).toBe(DELIVERIES);
    expect(accepted.filter((a) => a.runIds.length !== 1)).toEqual([]);
    const runs = await db.$queryRaw<Array<{ delivery: string; n: bigint }>>`
      SELECT metadata->>'delivery_id' AS delivery, count(*) AS n FROM "Run" GROUP BY 1`;
    expect(runs).toHaveLength(DELIVERIES);
    expect(runs.filter((r) => r.n !== 1n)).toEqual([]);
    // Each recorded run is the one its entry names, waiting for a runner.
    const named = new Set(accepted.map((a) => a.runIds[0]!));
    expect(await db.run.count({ where: { id: { in: [...named] }, state: 'QUEUED' } })).toBe(DELIVERIES);
  });
});
