import { Redis } from 'ioredis';
import { apiCall, REDIS_URL, startPlatform, type Json, type RunningPlatform } from '@conveyor/testing';
import { SIGNATURE_SCHEMES, signWebhook, type SignatureScheme } from '@conveyor/webhook-auth';
import { post } from './webhook-sender';

jest.setTimeout(120_000);

/** Each scheme's own unsigned delivery header: what a replayer changes to look like a new delivery. */
const DELIVERY_HEADER: Partial<Record<SignatureScheme, string>> = {
  github: 'x-github-delivery',
  shopify: 'x-shopify-webhook-id',
  linear: 'linear-delivery',
};

/**
 * Issue 34 item 1: a signed delivery replayed with a new delivery ID starts no second run — for every scheme that
 * signs something (GitLab's header is the secret itself), and not only while Redis remembers the first one.
 */
describe('issue 34.1: a replayed signed body starts no second run', () => {
  let platform: RunningPlatform;
  let redis: Redis;
  let factoryId: string;

  beforeAll(async () => {
    platform = await startPlatform({ withRunner: false });
    redis = new Redis(REDIS_URL);
    const factory = await apiCall(platform, 'POST', '/factories', { name: `replays-${Date.now()}` });
    factoryId = factory.body.factory_id as string;
  });

  afterAll(async () => {
    redis?.disconnect();
    await platform?.stop();
  });

  const deliveries = async (uid: string): Promise<Json[]> =>
    (await apiCall(platform, 'GET', `/factories/${factoryId}/webhooks/${uid}/deliveries?limit=200`)).body
      .deliveries as Json[];

  const until = async (uid: string, predicate: (entries: Json[]) => boolean, what: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const entries = await deliveries(uid);
      if (predicate(entries)) return entries;
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}: ${JSON.stringify(entries.map((e) => [e.delivery_id, e.label]))}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  };

  /** What the ingress's Redis remembers about the webhook's deliveries, as if DEDUPE_TTL_SECONDS had passed. */
  const forgetInRedis = async (uid: string) => {
    const keys = await redis.keys(`conveyor:webhook:${uid}:*`);
    const dedupe = keys.filter((k) => !k.endsWith(':version'));
    if (dedupe.length > 0) await redis.del(...dedupe);
  };

  describe.each(SIGNATURE_SCHEMES.filter((s) => s !== 'gitlab'))('%s', (scheme) => {
    it('the same signed body under a new delivery ID is logged Duplicate and starts nothing, also after Redis forgot it', async () => {
      const generated = scheme === 'standard-webhooks';
      // Slack retries any answer but 200, so its deliveries are answered 200 (docs/webhooks.md); the others 202.
      const accepted = scheme === 'slack' ? 200 : 202;
      const created = await apiCall(platform, 'POST', `/factories/${factoryId}/webhooks`, {
        name: `replay-${scheme}`,
        auth_mode: 'signature',
        signature_scheme: scheme,
        ...(generated ? {} : { provider_secret: `${scheme}-secret-0123456789` }),
      });
      expect(created.status).toBe(201);
      const uid = created.body.webhook_uid as string;
      const url = created.body.ingress_url as string;
      const secret = generated ? (created.body.secret as string) : `${scheme}-secret-0123456789`;
      const automation = await apiCall(platform, 'POST', `/factories/${factoryId}/automations`, {
        name: `on-${scheme}`,
        prompt: 'Handle the delivery.',
        trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [uid] } },
      });
      expect(automation.status).toBe(201);
      const runsOfAutomation = async () =>
        (
          await apiCall(
            platform,
            'GET',
            `/agent/runs?automation_id=${automation.body.automation_id as string}`,
          )
        ).body.runs as Json[];

      // No body field the provider's identity reads (Stripe's id, Slack's event_id): the replayer picks the ID.
      const body = JSON.stringify({ action: 'deploy', scheme });
      const signed = signWebhook(scheme, { secret, body, now: new Date() });
      const as = (id: string) => ({
        ...signed,
        ...(DELIVERY_HEADER[scheme] ? { [DELIVERY_HEADER[scheme]]: id } : {}),
        'x-service-delivery-id': id,
      });

      expect((await post(url, body, as('original'))).status).toBe(accepted);
      await until(
        uid,
        (e) => e.some((x) => x.label === 'Accepted' && (x.run_ids as string[]).length === 1),
        'the first run',
      );

      // A replay while Redis remembers the signed content, then one after it forgot it (the orchestrator's guard).
      expect((await post(url, body, as('replay-1'))).status).toBe(accepted);
      await forgetInRedis(uid);
      expect((await post(url, body, as('replay-2'))).status).toBe(accepted);

      const entries = await until(uid, (e) => e.length === 3, 'three log entries');
      const byId = (id: string) =>
        entries.find((e) => e.delivery_id === id) ?? { delivery_id: id, label: 'missing' };
      // Standard Webhooks signs its message ID, so the replays keep the original's ID.
      if (scheme === 'standard-webhooks') {
        expect(entries.filter((e) => e.label === 'Duplicate')).toHaveLength(2);
      } else {
        for (const id of ['replay-1', 'replay-2'])
          expect(byId(id)).toMatchObject({ label: 'Duplicate', run_ids: [] });
        expect(byId('replay-1').reason).toBe('replay: the same signed content was already accepted');
        expect(byId('replay-2').reason).toBe('replay: the same signed content was already accepted');
      }
      expect(await runsOfAutomation()).toHaveLength(1);
    });
  });

  it('github: eight copies sent at once under eight delivery IDs start one run', async () => {
    const secret = 'github-secret-0123456789';
    const created = await apiCall(platform, 'POST', `/factories/${factoryId}/webhooks`, {
      name: 'replay-race',
      auth_mode: 'signature',
      signature_scheme: 'github',
      provider_secret: secret,
    });
    const uid = created.body.webhook_uid as string;
    const automation = await apiCall(platform, 'POST', `/factories/${factoryId}/automations`, {
      name: 'on-race',
      prompt: 'Handle the delivery.',
      trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [uid] } },
    });
    const body = JSON.stringify({ action: 'race' });
    const signed = signWebhook('github', { secret, body, now: new Date() });
    const statuses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(created.body.ingress_url as string, body, { ...signed, 'x-github-delivery': `race-${i}` }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses).toEqual(Array.from({ length: 8 }, () => 202));
    const entries = await until(
      uid,
      (e) => e.length === 8 && e.some((x) => x.label === 'Accepted' && (x.run_ids as string[]).length === 1),
      'eight log entries, the accepted one processed',
    );
    expect(entries.filter((e) => e.label === 'Accepted')).toHaveLength(1);
    const runs = await apiCall(
      platform,
      'GET',
      `/agent/runs?automation_id=${automation.body.automation_id as string}`,
    );
    expect(runs.body.runs).toHaveLength(1);
  });
});
