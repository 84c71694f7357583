import { Redis } from 'ioredis';
import type { Consumer } from 'kafkajs';
import {
  createConsumer,
  createKafka,
  decodeDeliveryMessage,
  webhookConfigVersionKey,
  type DeliveryMessage,
} from '@conveyor/kafka';
import { createLogger } from '@conveyor/logger';
import type { ResolveWebhookResponse } from '@conveyor/proto';
import { createTestTrust, KAFKA_BROKERS, REDIS_URL, uniqueName, type TestTrust } from '@conveyor/testing';
import {
  generateWebhookSecret,
  signWebhook,
  SIGNATURE_SCHEMES,
  type SignatureScheme,
} from '@conveyor/webhook-auth';
import { loadIngressConfig } from './config';
import { bodyHash } from './delivery-identity';
import { Ingress } from './ingress';
import { CuttableKafkaNetwork } from './test-support/cuttable-kafka-network';
import { FakeWebhookDirectory } from './test-support/fake-webhook-directory';

jest.setTimeout(60_000);
const logger = createLogger({ service: 'ingress-test', level: 'silent' });

describe('ingress over real sockets, Redis and Kafka', () => {
  const topic = uniqueName('deliveries');
  const directory = new FakeWebhookDirectory();
  const network = new CuttableKafkaNetwork();
  const published: DeliveryMessage[] = [];
  let ingress: Ingress;
  let redis: Redis;
  let consumer: Consumer;
  let base: string;
  let trust: TestTrust;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    trust = await createTestTrust();
    const orchestratorAddr = await directory.start(trust.serviceEnv('orchestrator'));
    ingress = new Ingress(
      loadIngressConfig({
        ...trust.serviceEnv('ingress'),
        PORT: '0',
        REDIS_URL,
        KAFKA_BROKERS: KAFKA_BROKERS.join(','),
        DELIVERIES_TOPIC: topic,
        ORCHESTRATOR_ADDR: orchestratorAddr,
        PUBLISH_TIMEOUT_MS: '8000',
        TRUST_PROXY: 'loopback',
      }),
      logger,
      { kafkaSocketFactory: network.socketFactory },
    );
    await ingress.start();
    base = `http://127.0.0.1:${ingress.port}`;
    consumer = createConsumer(
      createKafka({ clientId: 'ingress-test', brokers: KAFKA_BROKERS }),
      uniqueName('group'),
    );
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const decoded = decodeDeliveryMessage(message.value);
        if (decoded) published.push(decoded);
      },
    });
  });

  afterAll(async () => {
    await consumer?.disconnect();
    await ingress?.stop();
    directory.stop();
    await redis?.quit();
    await trust?.remove();
  });

  let counter = 0;
  /** Registers a webhook as the orchestrator would: its configuration, then a fresh version token. */
  async function webhook(
    config: Partial<ResolveWebhookResponse> = {},
  ): Promise<{ uid: string; secret: string; update: (c: Partial<ResolveWebhookResponse>) => Promise<void> }> {
    const uid = `wh_test${Date.now().toString(36)}${counter++}`;
    const secret = config.secret ?? generateWebhookSecret();
    const update = async (change: Partial<ResolveWebhookResponse>) => {
      directory.webhooks.set(uid, { ...directory.webhooks.get(uid), ...change });
      await redis.set(webhookConfigVersionKey(uid), `${Date.now()}-${Math.random()}`);
    };
    await update({
      found: true,
      enabled: true,
      auth_mode: 'token',
      signature_scheme: '',
      awaiting_secret: false,
      delivery_id_header: '',
      team_id: 'team_t',
      ...config,
      secret,
    });
    return { uid, secret, update };
  }

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', body, headers });
  const bearer = (secret: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${secret}`,
    ...extra,
  });
  const waitFor = async (predicate: () => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const records = (uid: string) => published.filter((m) => m.webhookUid === uid);

  it('accepts POST only: other methods get 405 with Allow: POST', async () => {
    const { uid } = await webhook();
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(`${base}/webhooks/w/${uid}`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('token mode: 202 with delivery_id after Kafka acknowledged; the body reaches Kafka exactly as sent', async () => {
    const { uid, secret } = await webhook();
    const body = '{ "action" : "opened", "n": 1.50 }';
    const res = await post(`/webhooks/w/${uid}`, body, bearer(secret, { 'x-service-delivery-id': 'svc-1' }));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ delivery_id: 'svc-1' });
    await waitFor(() => records(uid).length === 1, 'accepted record');
    const [record] = records(uid);
    expect(record).toMatchObject({
      label: 'Accepted',
      deliveryId: 'svc-1',
      identitySource: 'service_header',
      sizeBytes: Buffer.byteLength(body),
    });
    expect(Buffer.from(record!.bodyBase64!, 'base64').toString()).toBe(body);
  });

  it('token mode: a missing, malformed or wrong credential is 401 and logged Rejected (auth) without the body', async () => {
    const { uid, secret } = await webhook();
    const attempts = [{}, { authorization: secret }, bearer(`${secret}x`), bearer(secret.slice(0, -1))];
    for (const headers of attempts) {
      const res = await post(`/webhooks/w/${uid}`, '{"secret":"payload"}', headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await res.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({
        status: 401,
        type: expect.stringMatching(/authentication_required$/),
        delivery_id: expect.stringMatching(/^rejected-/),
      });
    }
    await waitFor(() => records(uid).length === 4, 'rejected records');
    for (const record of records(uid)) {
      expect(record).toMatchObject({ label: 'Rejected (auth)', identitySource: 'none' });
      expect(record.bodyBase64).toBeUndefined();
      expect(record.reason).toBeTruthy();
    }
  });

  it('url_token mode: the secret is a path segment and never appears in error bodies', async () => {
    const { uid, secret } = await webhook({ auth_mode: 'url_token' });
    expect((await post(`/webhooks/w/${uid}/${secret}`, '[1,2]')).status).toBe(202);
    const wrong = await post(`/webhooks/w/${uid}/${secret}x`, '[1,2,3]');
    expect(wrong.status).toBe(401);
    const text = await wrong.text();
    expect(text).not.toContain(secret);
    expect(JSON.parse(text).instance).toBe(`/webhooks/w/${uid}/{token}`);
    expect((await post(`/webhooks/w/${uid}`, '[1]', bearer(secret))).status).toBe(401);
  });

  describe.each(SIGNATURE_SCHEMES)('signature mode %s', (scheme: SignatureScheme) => {
    const secret =
      scheme === 'standard-webhooks' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : `${scheme}-signing-secret`;

    it('accepts a correctly signed delivery and refuses an unsigned or tampered one', async () => {
      const { uid } = await webhook({ auth_mode: 'signature', signature_scheme: scheme, secret });
      const body = JSON.stringify({ id: 'evt_1', event_id: 'Ev1', hello: scheme });
      const headers = signWebhook(scheme, { secret, body, now: new Date() });
      // Slack retries anything but a 200 (docs/webhooks.md).
      expect((await post(`/webhooks/w/${uid}`, body, headers)).status).toBe(scheme === 'slack' ? 200 : 202);
      expect((await post(`/webhooks/w/${uid}`, body)).status).toBe(401);
      if (scheme !== 'gitlab')
        expect((await post(`/webhooks/w/${uid}`, body.replace('hello', 'hullo'), headers)).status).toBe(401);
    });
  });

  it('signature mode: Svix-prefixed headers, stale signatures, and a webhook awaiting its provider secret', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const { uid } = await webhook({ auth_mode: 'signature', signature_scheme: 'standard-webhooks', secret });
    const body = '{"svix":true}';
    const svix = Object.fromEntries(
      Object.entries(signWebhook('standard-webhooks', { secret, body, now: new Date(), id: 'msg_svix' })).map(
        ([k, v]) => [k.replace('webhook-', 'svix-'), v],
      ),
    );
    const accepted = await post(`/webhooks/w/${uid}`, body, svix);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ delivery_id: 'msg_svix' });
    const stale = new Date(Date.now() - 5 * 60_000 - 5_000);
    expect(
      (await post(`/webhooks/w/${uid}`, body, signWebhook('standard-webhooks', { secret, body, now: stale })))
        .status,
    ).toBe(401);
    const stripe = await webhook({
      auth_mode: 'signature',
      signature_scheme: 'stripe',
      secret: 'whsec_stripe',
    });
    expect(
      (
        await post(
          `/webhooks/w/${stripe.uid}`,
          body,
          signWebhook('stripe', { secret: 'whsec_stripe', body, now: stale }),
        )
      ).status,
    ).toBe(401);
    const awaiting = await webhook({
      auth_mode: 'signature',
      signature_scheme: 'stripe',
      secret: '',
      awaiting_secret: true,
    });
    expect(
      (
        await post(
          `/webhooks/w/${awaiting.uid}`,
          body,
          signWebhook('stripe', { secret: 'anything', body, now: new Date() }),
        )
      ).status,
    ).toBe(401);
  });

  it('accepts any JSON value whatever the Content-Type, and answers 400 otherwise', async () => {
    const { uid, secret } = await webhook();
    for (const body of ['42', '"text"', 'null', 'true', '[]', '{"a":{"b":[1]}}']) {
      const res = await post(`/webhooks/w/${uid}`, body, bearer(secret, { 'content-type': 'text/plain' }));
      expect(res.status).toBe(202);
    }
    for (const body of ['', '{', "{'a':1}", 'undefined', Buffer.from([0xff, 0xfe, 0x7b, 0x7d])]) {
      const res = await post(
        `/webhooks/w/${uid}`,
        body,
        bearer(secret, { 'content-type': 'application/json' }),
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        status: 400,
        type: expect.stringMatching(/invalid_request$/),
      });
    }
    await waitFor(
      () => records(uid).filter((r) => r.label === 'Rejected (invalid JSON)').length === 5,
      'invalid JSON records',
    );
  });

  it('413 over 256 KB, declared or streamed, without reading the rest; exactly 256 KB is fine', async () => {
    const { uid, secret } = await webhook();
    const limit = 256 * 1024;
    const fits = `"${'a'.repeat(limit - 2)}"`;
    expect((await post(`/webhooks/w/${uid}`, fits, bearer(secret))).status).toBe(202);
    const declared = await post(`/webhooks/w/${uid}`, `"${'a'.repeat(limit - 1)}"`, bearer(secret));
    expect(declared.status).toBe(413);
    // A streamed body with no Content-Length that never ends: the answer comes without the sender finishing.
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        await new Promise((r) => setTimeout(r, 5));
      },
    });
    const streamed = await fetch(`${base}/webhooks/w/${uid}`, {
      method: 'POST',
      body: stream,
      headers: bearer(secret),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    await waitFor(
      () => records(uid).filter((r) => r.label === 'Rejected (too large)').length === 2,
      'too-large records',
    );
    expect(records(uid).find((r) => r.label === 'Rejected (too large)')?.bodyBase64).toBeUndefined();
  });

  it('404 for unknown, disabled and deleted webhooks, in force for the very next request', async () => {
    expect((await post('/webhooks/w/wh_doesnotexist', '{}')).status).toBe(404);
    const { uid, secret, update } = await webhook();
    expect((await post(`/webhooks/w/${uid}`, '{"n":1}', bearer(secret))).status).toBe(202);
    await update({ enabled: false });
    expect((await post(`/webhooks/w/${uid}`, '{"n":2}', bearer(secret))).status).toBe(404);
    await update({ enabled: true });
    expect((await post(`/webhooks/w/${uid}`, '{"n":3}', bearer(secret))).status).toBe(202);
    await update({ found: false });
    expect((await post(`/webhooks/w/${uid}`, '{"n":4}', bearer(secret))).status).toBe(404);
  });

  it('a rotated secret stops at once, and an unchanged webhook is served from the cache', async () => {
    const { uid, secret, update } = await webhook();
    expect((await post(`/webhooks/w/${uid}`, '{"r":1}', bearer(secret))).status).toBe(202);
    const lookups = directory.lookups;
    expect((await post(`/webhooks/w/${uid}`, '{"r":2}', bearer(secret))).status).toBe(202);
    expect(directory.lookups).toBe(lookups);
    const rotated = generateWebhookSecret();
    await update({ secret: rotated });
    expect((await post(`/webhooks/w/${uid}`, '{"r":3}', bearer(secret))).status).toBe(401);
    expect((await post(`/webhooks/w/${uid}`, '{"r":4}', bearer(rotated))).status).toBe(202);
    // A lost version key (Redis flushed or evicted) means: refetch, never trust the cache.
    await redis.del(webhookConfigVersionKey(uid));
    directory.webhooks.set(uid, { ...directory.webhooks.get(uid)!, enabled: false });
    expect((await post(`/webhooks/w/${uid}`, '{"r":5}', bearer(rotated))).status).toBe(404);
  });

  it('dedupes by the identity order: configured header, provider header, X-Service-Delivery-Id, body hash', async () => {
    const { uid, secret } = await webhook({ delivery_id_header: 'x-my-id' });
    const first = await post(
      `/webhooks/w/${uid}`,
      '{"a":1}',
      bearer(secret, { 'x-my-id': 'mine-1', 'x-service-delivery-id': 'svc-9' }),
    );
    expect(await first.json()).toEqual({ delivery_id: 'mine-1' });
    const again = await post(`/webhooks/w/${uid}`, '{"a":2}', bearer(secret, { 'x-my-id': 'mine-1' }));
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ delivery_id: 'mine-1' });
    const byHash = await post(`/webhooks/w/${uid}`, '{"same":"body"}', bearer(secret));
    expect(await byHash.json()).toEqual({ delivery_id: bodyHash(Buffer.from('{"same":"body"}')) });
    expect((await post(`/webhooks/w/${uid}`, '{"same":"body"}', bearer(secret))).status).toBe(202);
    await waitFor(() => records(uid).length === 4, 'dedupe records');
    expect(records(uid).map((r) => [r.deliveryId, r.label])).toEqual(
      expect.arrayContaining([
        ['mine-1', 'Accepted'],
        ['mine-1', 'Duplicate'],
        [bodyHash(Buffer.from('{"same":"body"}')), 'Accepted'],
        [bodyHash(Buffer.from('{"same":"body"}')), 'Duplicate'],
      ]),
    );
    expect(records(uid).find((r) => r.label === 'Duplicate')?.bodyBase64).toBeUndefined();
    const github = await webhook({ auth_mode: 'signature', signature_scheme: 'github', secret: 'gh' });
    const body = '{"zen":"x"}';
    const signed = {
      ...signWebhook('github', { secret: 'gh', body, now: new Date() }),
      'x-github-delivery': 'gh-guid-1',
      'x-service-delivery-id': 'ignored',
    };
    expect(await (await post(`/webhooks/w/${github.uid}`, body, signed)).json()).toEqual({
      delivery_id: 'gh-guid-1',
    });
  });

  it('limits each sender to 60 deliveries a minute per webhook, with Retry-After; other senders are unaffected', async () => {
    const { uid, secret } = await webhook();
    const sender = { 'x-forwarded-for': '203.0.113.7' };
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(`/webhooks/w/${uid}`, `{"i":${i}}`, bearer(secret, sender)).then((r) => r.status),
      ),
    );
    expect(statuses.every((s) => s === 202)).toBe(true);
    const limited = await post(`/webhooks/w/${uid}`, '{"i":60}', bearer(secret, sender));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await limited.json()).toMatchObject({ status: 429, type: expect.stringMatching(/rate_limited$/) });
    expect(
      (await post(`/webhooks/w/${uid}`, '{"i":61}', bearer(secret, { 'x-forwarded-for': '203.0.113.8' })))
        .status,
    ).toBe(202);
  });

  it('has a separate, smaller budget for failed authentications that alone produces 429', async () => {
    const { uid, secret } = await webhook();
    const sender = { 'x-forwarded-for': '198.51.100.23' };
    for (let i = 0; i < 20; i++)
      expect((await post(`/webhooks/w/${uid}`, '{}', bearer('wrong', sender))).status).toBe(401);
    const blocked = await post(`/webhooks/w/${uid}`, '{"ok":1}', bearer(secret, sender));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(
      (await post(`/webhooks/w/${uid}`, '{"ok":2}', bearer(secret, { 'x-forwarded-for': '198.51.100.24' })))
        .status,
    ).toBe(202);
  });

  it('answers 503 with Retry-After when Kafka is unreachable, records nothing as accepted, and accepts the retry', async () => {
    const { uid, secret } = await webhook();
    network.cut();
    const started = Date.now();
    const res = await post(
      `/webhooks/w/${uid}`,
      '{"during":"outage"}',
      bearer(secret, { 'x-service-delivery-id': 'outage-1' }),
    );
    const elapsed = Date.now() - started;
    network.restore();
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ status: 503, retryable: true });
    expect(elapsed).toBeLessThan(5000);

    const retry = await post(
      `/webhooks/w/${uid}`,
      '{"during":"outage"}',
      bearer(secret, { 'x-service-delivery-id': 'outage-1' }),
    );
    expect(retry.status).toBe(202);
    await waitFor(() => records(uid).some((r) => r.label === 'Accepted'), 'accepted retry');
    // Give a late copy from the outage every chance to show up before asserting it never does.
    await new Promise((r) => setTimeout(r, 1500));
    expect(records(uid).map((r) => r.label)).toEqual(['Accepted']);
  });
});
