import { apiCall, createMember, createTeam, startPlatform, type RunningPlatform } from '@conveyor/testing';
import { createWebhook, post } from './webhook-sender';

jest.setTimeout(120_000);

describe('finding 6: edges — nobody is a trusted proxy, per-key and per-team rate limits, authentication before bodies', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    // The services as shipped (no TRUST_PROXY), with small API budgets so a burst is quick to send.
    platform = await startPlatform({
      withRunner: false,
      env: { RATE_LIMIT_PER_KEY_POINTS: '5', RATE_LIMIT_PER_TEAM_POINTS: '8' },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  async function teamWithKeys(count: number): Promise<string[]> {
    const teamId = await createTeam(platform);
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push((await createMember(platform, { teamId })).key);
    return keys;
  }

  it('ingress: a client on a private address naming a new sender in every X-Forwarded-For still shares one budget of 60 a minute', async () => {
    const hook = await createWebhook(platform, 'forged-senders');
    const send = (i: number) =>
      post(hook.url, JSON.stringify({ i }), {
        authorization: `Bearer ${hook.secret}`,
        'x-forwarded-for': `198.51.100.${i}`,
      });
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => send(i).then((r) => r.status)));
    expect(statuses.every((s) => s === 202)).toBe(true);
    const forged = await send(60);
    expect(forged.status).toBe(429);
    expect(Number(forged.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('gateway: a burst on one key gets 429 rate_limited with Retry-After; the team budget caps all its keys together', async () => {
    const [first, second] = await teamWithKeys(2);
    const [otherTeam] = await teamWithKeys(1);
    const list = (key: string) => apiCall(platform, 'GET', '/agent/runs', undefined, key);
    for (let i = 0; i < 5; i++) expect((await list(first!)).status).toBe(200);
    const limited = await list(first!);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(limited.body).toMatchObject({ status: 429, retryable: true });
    expect(limited.body.type).toMatch(/\/rate_limited$/);

    // The team has 8: 5 spent by the first key, 3 left for the second.
    for (let i = 0; i < 3; i++) expect((await list(second!)).status).toBe(200);
    expect((await list(second!)).status).toBe(429);
    // Another team is untouched.
    expect((await list(otherTeam!)).status).toBe(200);
  });

  it('gateway: a request without a valid key is refused before its body is read', async () => {
    const send = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${platform.apiUrl}/agent/runs`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
      });
    expect((await send('{"prompt": not json')).status).toBe(401);
    expect((await send('{"prompt": not json', { authorization: 'Bearer not-a-key' })).status).toBe(401);
    const huge = JSON.stringify({ prompt: 'x'.repeat(11 * 1024 * 1024) });
    expect((await send(huge)).status).toBe(401);
    // With a key, the same body is parsed and refused for what it is.
    const [key] = await teamWithKeys(1);
    expect((await send('{"prompt": not json', { authorization: `Bearer ${key}` })).status).toBe(400);
  });
});
