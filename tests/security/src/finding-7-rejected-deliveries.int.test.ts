import { startPlatform, type RunningPlatform } from '@conveyor/testing';
import { createWebhook, post } from './webhook-sender';

jest.setTimeout(120_000);

describe('finding 7: deliveries rejected as too large or invalid JSON count against the sender budget', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    platform = await startPlatform({ withRunner: false });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('61 rejected deliveries within a minute: the 61st gets 429 with Retry-After, and so does a valid one after it', async () => {
    const hook = await createWebhook(platform, 'rejected-budget');
    const auth = { authorization: `Bearer ${hook.secret}` };
    const tooLarge = JSON.stringify({ big: 'x'.repeat(256 * 1024) });
    // All at once, well within one budget window.
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(hook.url, i % 2 === 0 ? '{"truncated":' : tooLarge, auth).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 400)).toHaveLength(30);
    expect(statuses.filter((s) => s === 413)).toHaveLength(30);

    const sixtyFirst = await post(hook.url, '{"truncated":', auth);
    expect(sixtyFirst.status).toBe(429);
    expect(Number(sixtyFirst.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(sixtyFirst.body.type).toMatch(/\/rate_limited$/);
    expect((await post(hook.url, tooLarge, auth)).status).toBe(429);
    expect((await post(hook.url, '{"valid":true}', auth)).status).toBe(429);
  });
});
