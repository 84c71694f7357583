import { Webhook } from 'standardwebhooks';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import {
  createMember,
  otherTeamAdmin,
  startEventReceiver,
  type EventReceiver,
  type ReceivedEvent,
} from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';

// Outgoing run events (docs/events.md) from the built services: a run on the real runner, its events signed to a
// receiver on loopback, which only the operator's allow-lists (EGRESS_ALLOWED_ADDRESSES, EVENT_HTTP_ALLOWED_HOSTS) let
// the platform reach.
describe('event endpoints end to end (gateway → orchestrator → receiver)', () => {
  let platform: RunningPlatform;
  let db: PrismaClient;
  let rx: EventReceiver;
  let memberKey: string;
  let outsiderKey: string;

  beforeAll(async () => {
    rx = await startEventReceiver();
    platform = await startPlatform({
      env: {
        EGRESS_ALLOWED_ADDRESSES: new URL(rx.url).host,
        EVENT_HTTP_ALLOWED_HOSTS: '127.0.0.1',
        // Retries at once: the test waits for the second request, not for a clock.
        EVENT_RETRY_SCHEDULE_MS: '0,0,0',
      },
    });
    db = createPrismaClient(platform.databaseUrl);
    [memberKey, outsiderKey] = await Promise.all([
      createMember(platform).then((m) => m.key),
      otherTeamAdmin(platform).then((a) => a.key),
    ]);
  }, 120_000);

  afterAll(async () => {
    rx?.close();
    await db?.$disconnect();
    await platform?.stop();
  });

  const api = (method: string, path: string, body?: unknown, key?: string) =>
    apiCall(platform, method, path, body, key);

  it('sends run.succeeded signed for standardwebhooks, retries a 503 with the same webhook-id, and 410 disables', async () => {
    const created = await api('POST', '/event-endpoints', { url: rx.url, event_types: ['run.succeeded'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      endpoint_id: expect.stringMatching(/^ep_/),
      url: rx.url,
      event_types: ['run.succeeded'],
      enabled: true,
      secret: expect.stringMatching(/^whsec_/),
    });
    const id = created.body.endpoint_id as string;
    const secret = created.body.secret as string;
    expect((await api('GET', `/event-endpoints/${id}`)).body).not.toHaveProperty('secret');

    const run = await api('POST', '/agent/run', { prompt: 'say hello' });
    const runId = run.body.run_id as string;
    await waitForRunState(platform, runId, ['SUCCEEDED']);
    const verify = (r: ReceivedEvent) =>
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>;

    const first = await rx.next();
    expect(verify(first)).toMatchObject({
      type: 'run.succeeded',
      data: {
        run_id: runId,
        state: 'SUCCEEDED',
        session_link: expect.stringContaining(`/console/runs/${runId}`),
      },
    });
    first.respond(503);
    const second = await rx.next();
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(verify(second)).toEqual(verify(first));
    second.respond(200);

    const attempts = await api('GET', `/event-endpoints/${id}/attempts`, undefined, memberKey);
    expect(attempts.status).toBe(200);
    expect(attempts.body.attempts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event_id: first.headers['webhook-id'], status_code: 503 }),
      ]),
    );

    // Replay, answered 410: the endpoint is disabled and says why.
    const replay = await api('POST', `/event-endpoints/${id}/events/${first.headers['webhook-id']}/replay`);
    expect(replay.status).toBe(202);
    const replayed = await rx.next();
    expect(replayed.headers['webhook-id']).toBe(first.headers['webhook-id']);
    replayed.respond(410);
    let endpoint = (await api('GET', `/event-endpoints/${id}`)).body;
    for (let i = 0; endpoint.enabled && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      endpoint = (await api('GET', `/event-endpoints/${id}`)).body;
    }
    expect(endpoint).toMatchObject({ enabled: false, disabled_reason: expect.stringMatching(/410/) });
  });

  it('members read but cannot write, other teams see 404, and the secret is stored encrypted', async () => {
    const created = await api('POST', '/event-endpoints', { url: rx.url, event_types: ['*'] });
    const id = created.body.endpoint_id as string;
    const secret = created.body.secret as string;

    const denied = await api('POST', '/event-endpoints', { url: rx.url, event_types: ['*'] }, memberKey);
    expect(denied.status).toBe(403);
    expect((await api('PATCH', `/event-endpoints/${id}`, { enabled: false }, memberKey)).status).toBe(403);
    expect((await api('GET', '/event-endpoints', undefined, memberKey)).body.endpoints).toEqual(
      expect.arrayContaining([expect.objectContaining({ endpoint_id: id })]),
    );

    const hidden = await api('GET', `/event-endpoints/${id}`, undefined, outsiderKey);
    const missing = await api('GET', '/event-endpoints/ep_doesnotexist', undefined, outsiderKey);
    expect(hidden.status).toBe(404);
    expect(hidden.body.detail).toBe(missing.body.detail);
    expect((await api('DELETE', `/event-endpoints/${id}`, undefined, outsiderKey)).status).toBe(404);
    expect((await api('POST', `/event-endpoints/${id}/rotate-secret`, undefined, outsiderKey)).status).toBe(
      404,
    );
    expect((await api('GET', '/event-endpoints', undefined, outsiderKey)).body.endpoints).toEqual([]);

    const row = await db.eventEndpoint.findUniqueOrThrow({ where: { id } });
    expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));
    expect(Buffer.from(row.secretCiphertext).includes(Buffer.from(secret))).toBe(false);
    expect(Buffer.from(row.secretCiphertext).includes(Buffer.from(secret.slice(6), 'base64'))).toBe(false);

    const refused = await api('POST', '/event-endpoints', {
      url: 'http://example.com/hook',
      event_types: ['*'],
    });
    expect(refused.status).toBe(400);
    expect((await api('DELETE', `/event-endpoints/${id}`)).status).toBe(204);
  });
});
