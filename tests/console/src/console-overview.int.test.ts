import type { Page } from 'playwright-core';
import {
  apiCall,
  otherTeamAdmin,
  type EventReceiver,
  type Json,
  type RunningPlatform,
} from '@conveyor/testing';
import {
  originOf,
  screenshotsAtBothWidths,
  signIn,
  startConsole,
  waitForText,
  type ConsoleSetup,
} from './console-helpers';

const sum = (rows: Json[], field: string) => rows.reduce((total, r) => total + Number(r[field]), 0);

/**
 * The overview (docs/console.md "Overview"): `GET /v1/insights` counts the caller's team only — another team's
 * runs, usage, webhook deliveries and event deliveries never show — and the page draws it in real Chromium.
 */
describe('console overview and GET /v1/insights', () => {
  let platform: RunningPlatform;
  let page: Page;
  let rx: EventReceiver;
  let other: { key: string };

  /** Creates runs with the key and waits until each ended. */
  async function finishedRuns(count: number, prompt: string, key: string): Promise<void> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await apiCall(platform, 'POST', '/agent/runs', { prompt, title: `insight ${i}` }, key);
      expect(created.status).toBe(200);
      ids.push(String(created.body.run_id));
    }
    for (const id of ids)
      for (let state = ''; !['SUCCEEDED', 'FAILED', 'ERROR'].includes(state);) {
        state = String((await apiCall(platform, 'GET', `/agent/runs/${id}`, undefined, key)).body.state);
        if (!['SUCCEEDED', 'FAILED', 'ERROR'].includes(state)) await new Promise((r) => setTimeout(r, 200));
      }
  }

  const insights = async (key: string) => {
    const res = await apiCall(platform, 'GET', '/insights', undefined, key);
    expect(res.status).toBe(200);
    return res.body as Json & {
      runs_per_hour: Json[];
      time_to_agent: Json[];
      usage_per_day: Json[];
      deliveries_per_minute: Json[];
      event_deliveries: Json;
      capacity: Json;
    };
  };

  let setup: ConsoleSetup | undefined;

  beforeAll(async () => {
    setup = await startConsole();
    ({ platform, page, rx } = setup);
    other = await otherTeamAdmin(platform);
  }, 120_000);

  afterAll(() => setup?.stop());

  it("counts the team's runs, time to agent, usage, webhook and event deliveries — and none of another team's", async () => {
    // The other team is busy: more runs, more tokens, its own webhook delivery and event endpoint.
    const theirHook = await (async () => {
      const factory = await apiCall(platform, 'POST', '/factories', { name: 'theirs' }, other.key);
      return (
        await apiCall(
          platform,
          'POST',
          `/factories/${String(factory.body.factory_id)}/webhooks`,
          { name: 'h' },
          other.key,
        )
      ).body as Json & { ingress_url: string; secret: string };
    })();
    expect(
      (
        await apiCall(
          platform,
          'POST',
          '/event-endpoints',
          { url: rx.url, event_types: ['run.succeeded'] },
          other.key,
        )
      ).status,
    ).toBe(201);
    const factory = await apiCall(platform, 'POST', '/factories', { name: 'ours' });
    const ourHook = (
      await apiCall(platform, 'POST', `/factories/${String(factory.body.factory_id)}/webhooks`, { name: 'h' })
    ).body as Json & { ingress_url: string; secret: string };
    expect(
      (await apiCall(platform, 'POST', '/event-endpoints', { url: rx.url, event_types: ['run.succeeded'] }))
        .status,
    ).toBe(201);
    // Every event is answered 200 as it arrives.
    let receiving = true;
    void (async () => {
      while (receiving) (await rx.next()).respond(200);
    })().catch(() => undefined);

    await finishedRuns(3, '@demo usage 1000 100', other.key);
    await finishedRuns(2, '@demo usage 120 40', platform.apiKey);
    for (const [hook, count] of [
      [theirHook, 3],
      [ourHook, 1],
    ] as const)
      for (let i = 0; i < count; i++)
        expect(
          (
            await fetch(hook.ingress_url, {
              method: 'POST',
              body: JSON.stringify({ n: i }),
              headers: { authorization: `Bearer ${hook.secret}`, 'x-service-delivery-id': `d-${i}` },
            })
          ).status,
        ).toBe(202);

    // Deliveries reach the log through Kafka and events through the dispatcher: wait until both show.
    let ours = await insights(platform.apiKey);
    for (
      let i = 0;
      i < 300 &&
      (sum(ours.deliveries_per_minute, 'count') < 1 || Number(ours.event_deliveries.succeeded) < 2);
      i++
    ) {
      await new Promise((r) => setTimeout(r, 200));
      ours = await insights(platform.apiKey);
    }
    receiving = false;
    expect(sum(ours.runs_per_hour, 'count')).toBe(2);
    expect(ours.runs_per_hour.every((r) => r.state === 'SUCCEEDED')).toBe(true);
    expect(sum(ours.time_to_agent, 'runs')).toBe(2);
    expect(
      ours.time_to_agent.every((t) => Number(t.p95_ms) >= Number(t.p50_ms) && Number(t.p50_ms) >= 0),
    ).toBe(true);
    expect(sum(ours.usage_per_day, 'input_tokens')).toBe(240);
    expect(sum(ours.usage_per_day, 'output_tokens')).toBe(80);
    expect(ours.deliveries_per_minute).toEqual([expect.objectContaining({ outcome: 'Accepted', count: 1 })]);
    expect(ours.event_deliveries).toMatchObject({ succeeded: 2, failed: 0, success_rate: 1 });
    expect(ours.capacity).toMatchObject({ queued: 0, running: 0, workers: 0 });

    const theirs = await insights(other.key);
    expect(sum(theirs.runs_per_hour, 'count')).toBe(3);
    expect(sum(theirs.usage_per_day, 'input_tokens')).toBe(3000);
    expect(sum(theirs.deliveries_per_minute, 'count')).toBe(3);
  });

  it('refuses a window out of bounds at the field, in the contract’s error shape', async () => {
    const res = await apiCall(platform, 'GET', '/insights?hours=0&days=91');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      status: 400,
      errors: expect.arrayContaining([expect.objectContaining({ path: 'hours' })]),
    });
  });

  it('draws the overview: the numbers now and five charts, each with its data as a table', async () => {
    await signIn(page, platform, platform.apiKey);
    await page.goto(`${originOf(platform)}/console`);
    await waitForText(page, 'h1', 'Overview');
    await page.waitForFunction(() => document.querySelectorAll('.chart canvas').length === 5);
    expect(await page.locator('#stat-queued').textContent()).toBe('0');
    expect(await page.locator('#stat-event-rate').textContent()).toBe('100.0 %');
    await page.locator('#chart-runs-title').waitFor();
    await page.locator('.chart', { hasText: 'Runs ended per hour' }).getByText('Data').click();
    await waitForText(page, '.chart-data[open] td', '^2$');
    await screenshotsAtBothWidths(page, 'overview');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
