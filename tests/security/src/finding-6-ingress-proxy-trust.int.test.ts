import { startPlatform, type RunningPlatform } from '@conveyor/testing';
import { createWebhook, post } from './webhook-sender';

jest.setTimeout(120_000);

describe('finding 6 (ingress): X-Forwarded-For is believed from nobody unless TRUST_PROXY names the proxy', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    // The ingress as shipped: no TRUST_PROXY. The test client sits on loopback, a private address like any pod's.
    platform = await startPlatform({ withRunner: false });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('a client naming a new sender in every request still shares one budget of 60 deliveries a minute', async () => {
    const hook = await createWebhook(platform, 'forged-senders');
    const send = (i: number) => post(hook.url, JSON.stringify({ i }), { authorization: `Bearer ${hook.secret}`, 'x-forwarded-for': `198.51.100.${i}` });
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await send(i)).status);
    expect(statuses.every((s) => s === 202)).toBe(true);
    const forged = await send(60);
    expect(forged.status).toBe(429);
    expect(Number(forged.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
