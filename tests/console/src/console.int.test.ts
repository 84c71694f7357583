import type { Browser, Page } from 'playwright-core';
import {
  apiCall,
  otherTeamAdmin,
  type EventReceiver,
  type Json,
  type RunningPlatform,
} from '@conveyor/testing';
import {
  createRun,
  readSse,
  screenshot,
  sessionPath,
  signIn,
  startConsole,
  waitForText,
  type ConsoleSetup,
} from './console-helpers';

/**
 * The web console in real Chromium against the real services (docs/console.md): sign-in, a run's live view, a
 * follow-up, cancellation, the webhook delivery log, team isolation, CSRF, and the SSE stream's completeness.
 */
describe('web console', () => {
  let platform: RunningPlatform;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let rx: EventReceiver;
  const sessionCookie = async () =>
    (await page.context().cookies()).find((c) => c.name === 'conveyor_console')!;

  let setup: ConsoleSetup | undefined;

  beforeAll(async () => {
    // The event endpoint of the attempts view is a receiver on loopback; its 503 is retried a minute later.
    setup = await startConsole({ EVENT_RETRY_SCHEDULE_MS: '0,60000' });
    ({ platform, browser, page, origin, rx } = setup);
    await page.setViewportSize({ width: 1200, height: 900 });
  }, 120_000);

  afterAll(() => setup?.stop());

  it('signs in with an API key into an HttpOnly, SameSite=Strict session cookie served under a strict CSP', async () => {
    const res = await fetch(`${origin}/console/runs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");

    await page.goto(`${origin}/console/sign-in`);
    await page.fill('#api-key', 'not-a-key');
    await page.click('button[type=submit]');
    await waitForText(page, '[role=alert]', '.');

    await signIn(page, platform, platform.apiKey);
    const cookie = await sessionCookie();
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookie.value).not.toContain(platform.apiKey);
  });

  it('opens a run at its session link and shows messages, tool steps and state arriving live; a follow-up continues it', async () => {
    const run = await createRun(
      platform,
      [
        'Explain the build',
        '@demo sleep 2500',
        '@demo message Reading the build files',
        '@demo tool bash {"cmd":"cat turbo.json"} => {"stdout":"{}"}',
        '@demo usage 120 40',
        '@demo artifact PULL_REQUEST {"url":"https://git.example/pr/1","branch":"fix-build"}',
        '@demo sleep 1000',
        '@demo message Waiting for you',
        '@demo await-followup 60000',
      ].join('\n'),
      'Live console run',
    );
    await page.goto(`${origin}${sessionPath(run)}`);
    await waitForText(page, 'h1', 'Live console run');
    // Everything below arrives over the event stream while the page stays open.
    await waitForText(page, '.message-agent .text', '^Reading the build files$');
    await waitForText(page, '#run-state', 'INPROGRESS');
    await waitForText(page, '.tool summary', 'bash');
    await page.click('.tool summary');
    await waitForText(page, '.tool[open] pre', 'cat turbo.json');
    await waitForText(page, '#run-usage', '^120 input / 40 output tokens');
    await waitForText(page, '.message-agent .text', '^Waiting for you$');
    await waitForText(page, '.artifacts li', 'PULL_REQUEST fix-build');
    await waitForText(page, '.timeline li', 'QUEUED');
    await screenshot(page, 'run-live');

    await page.fill('#followup', '@demo message Thanks, finishing now');
    await page.click('.followup button[type=submit]');
    await waitForText(page, '[role=status]', 'Follow-up sent');
    await waitForText(page, '.message-user', 'Follow-up');
    await waitForText(page, '.message-agent .text', '^Thanks, finishing now$');
    await waitForText(page, '#run-state', 'SUCCEEDED');
    await waitForText(page, '#run-status', '.');
    expect(await page.$eval('a[href$="/transcript"]', (a) => a.getAttribute('href'))).toBe(
      `/console/api/agent/runs/${run.run_id}/transcript`,
    );
    await screenshot(page, 'run-done');
  });

  it('cancels another run from its page', async () => {
    const run = await createRun(
      platform,
      '@demo message Working for a long time\n@demo sleep 120000',
      'Run to cancel',
    );
    await page.goto(`${origin}${sessionPath(run)}`);
    await waitForText(page, '.message-agent .text', 'Working for a long time');
    await page.click('button.danger');
    await waitForText(page, '#run-state', 'CANCELLED');
    expect((await apiCall(platform, 'GET', `/agent/runs/${run.run_id}`)).body.state).toBe('CANCELLED');
  });

  it('refuses state-changing console requests without the CSRF token or from another origin', async () => {
    const run = await createRun(platform, '@demo sleep 120000', 'CSRF target');
    const cookie = await sessionCookie();
    const session = (await (
      await fetch(`${origin}/console/api/session`, {
        headers: { cookie: `conveyor_console=${cookie.value}` },
      })
    ).json()) as { csrf_token: string };
    const cancel = (headers: Record<string, string>) =>
      fetch(`${origin}/console/api/agent/runs/${run.run_id}/cancel`, {
        method: 'POST',
        headers: { cookie: `conveyor_console=${cookie.value}`, ...headers },
      });
    expect((await cancel({ origin })).status).toBe(403);
    expect((await cancel({ origin, 'x-csrf-token': 'wrong' })).status).toBe(403);
    expect((await cancel({ origin: 'http://evil.example', 'x-csrf-token': session.csrf_token })).status).toBe(
      403,
    );
    expect((await apiCall(platform, 'GET', `/agent/runs/${run.run_id}`)).body.state).not.toBe('CANCELLED');
    expect((await cancel({ origin, 'x-csrf-token': session.csrf_token })).status).toBe(200);
  });

  it("shows a webhook's delivery log, its payload, and follows an accepted delivery to the run it started", async () => {
    const factory = await apiCall(platform, 'POST', '/factories', { name: 'Console factory' });
    const factoryId = factory.body.factory_id as string;
    const hook = (
      await apiCall(platform, 'POST', `/factories/${factoryId}/webhooks`, { name: 'issues-hook' })
    ).body as Json & { webhook_uid: string; ingress_url: string; secret: string };
    const trigger = { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.webhook_uid] } };
    expect(
      (
        await apiCall(platform, 'POST', `/factories/${factoryId}/automations`, {
          name: 'triage',
          prompt: 'Triage the issue.\n@demo message Triaged',
          trigger,
        })
      ).status,
    ).toBe(201);
    const sent = await fetch(hook.ingress_url, {
      method: 'POST',
      body: JSON.stringify({ action: 'opened', issue: 42 }),
      headers: { authorization: `Bearer ${hook.secret}`, 'x-service-delivery-id': 'issue-42' },
    });
    expect(sent.status).toBe(202);
    let runIds: string[] = [];
    for (let i = 0; i < 200 && runIds.length === 0; i++) {
      const log = await apiCall(
        platform,
        'GET',
        `/factories/${factoryId}/webhooks/${hook.webhook_uid}/deliveries`,
      );
      runIds = ((log.body.deliveries as Json[])[0]?.run_ids as string[] | undefined) ?? [];
      if (runIds.length === 0) await new Promise((r) => setTimeout(r, 150));
    }
    expect(runIds).toHaveLength(1);

    await page.goto(`${origin}/console/webhooks`);
    await waitForText(page, 'h2', 'Console factory');
    await page.click('.card h3 a');
    await waitForText(page, 'h1', 'Delivery log: issues-hook');
    await waitForText(page, 'td code', 'issue-42');
    await waitForText(page, '.label', 'Accepted');
    await page.getByRole('button', { name: /Payload/ }).click();
    await waitForText(page, '.payload-row pre', '"issue": 42');
    await screenshot(page, 'webhook-log');
    await page.click('a.run-link');
    await page.waitForURL(`**/console/runs/${runIds[0]!}`);
    await waitForText(page, '.message-agent .text', 'Triaged');
  });

  it("a second team's user sees none of the first team's runs, webhooks or event streams", async () => {
    const theirs = await createRun(platform, '@demo message secret work of team one', 'Team one only');
    const otherKey = (await otherTeamAdmin(platform)).key;
    const context = await browser.newContext();
    const other = await context.newPage();
    try {
      await signIn(other, platform, otherKey);
      await other.goto(`${origin}/console/runs`);
      await waitForText(other, 'p', 'No runs match');
      expect(await other.content()).not.toContain('Team one only');
      await other.goto(`${origin}/console/runs/${theirs.run_id}`);
      await waitForText(other, '[role=alert]', 'not found');
      expect(await other.content()).not.toContain('secret work of team one');
      await other.goto(`${origin}/console/webhooks`);
      await waitForText(other, 'p', 'No factories yet');
      expect(await other.content()).not.toContain('Console factory');
      const stream = await other.evaluate(
        async (id: string) => (await fetch(`/console/api/agent/runs/${id}/events`)).status,
        theirs.run_id,
      );
      expect(stream).toBe(404);
    } finally {
      await context.close();
    }
  });

  it('keeps up with a run emitting about 100 events a second: every event arrives once, also across a reconnect', async () => {
    const count = 600;
    const lines = ['@demo sleep 2000'];
    for (let i = 0; i < count; i++) lines.push(`@demo message burst ${i}`, '@demo sleep 10');
    const run = await createRun(platform, lines.join('\n'), 'Event burst');
    await page.goto(`${origin}${sessionPath(run)}`);
    // Generous: on a loaded 2-core machine the run itself may take minutes; no timing is asserted.
    await waitForText(page, '#run-state', 'SUCCEEDED', 360_000);
    // The page keeps answering while the burst streams in and renders every message exactly once.
    await page.waitForFunction(
      (n) => document.querySelectorAll('.message-agent .text').length === n + 1,
      count,
      { timeout: 60_000 },
    );
    const texts = await page.$$eval('.message-agent .text', (els) => els.map((el) => el.textContent));
    expect(texts.slice(0, count)).toEqual(Array.from({ length: count }, (_, i) => `burst ${i}`));

    // The raw stream: all events from the start, then the same again in two halves joined by Last-Event-ID.
    const cookie = `conveyor_console=${(await sessionCookie()).value}`;
    const url = `${origin}/console/api/agent/runs/${run.run_id}/events`;
    const isLast = (events: Array<{ kind: string; data: Json }>) =>
      events.some((e) => e.kind === 'state_changed' && e.data.to === 'SUCCEEDED');
    const all = await readSse(url, { cookie }, isLast);
    expect(all.filter((e) => e.kind === 'agent_message')).toHaveLength(count + 1);
    const first = await readSse(url, { cookie }, (events) => events.length === 250);
    const rest = await readSse(url, { cookie, 'last-event-id': String(first[first.length - 1]!.id) }, isLast);
    expect([...first, ...rest].map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
  }, 600_000);

  it('filters the runs list the way the API does and pages with its cursor', async () => {
    // Wait for the first page to load: its render resets the (controlled) filter fields.
    await page.goto(`${origin}/console/runs`, { waitUntil: 'networkidle' });
    await page.waitForSelector('tbody tr');
    await page.selectOption('select[name=state]', 'CANCELLED');
    await page.click('.filters button[type=submit]');
    await page.waitForURL(/state=CANCELLED/);
    await waitForText(page, 'td a', 'Run to cancel');
    // The unfiltered rows may still be on screen for a moment: wait for the filtered page to replace them.
    await page
      .waitForFunction(() => {
        const badges = Array.from(document.querySelectorAll('tbody .badge'));
        return badges.length > 0 && badges.every((el) => el.textContent === 'CANCELLED');
      })
      .catch(() => undefined);
    const states = await page.$$eval('tbody .badge', (els) => els.map((el) => el.textContent));
    expect(states.length).toBeGreaterThan(0);
    expect(new Set(states)).toEqual(new Set(['CANCELLED']));

    await page.goto(`${origin}/console/runs?limit=2&sort_by=created_at&sort_order=asc`);
    await waitForText(page, 'td a', 'Live console run');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await waitForText(page, 'td a', '.');
    // The first page's rows may still be on screen for a moment: wait for the next page to replace them.
    await page
      .waitForFunction(
        () =>
          !Array.from(document.querySelectorAll('td a')).some((a) => a.textContent === 'Live console run'),
      )
      .catch(() => undefined);
    expect(await page.content()).not.toContain('Live console run');
  });

  it('lists schedules with their next run and opens one', async () => {
    const created = await apiCall(platform, 'POST', '/agent/schedules', {
      name: 'Nightly report',
      cron_schedule: '0 3 * * *',
      prompt: 'Write the report',
      enabled: true,
    });
    expect(created.status).toBe(200);
    await page.goto(`${origin}/console/schedules`);
    await waitForText(page, 'td a', 'Nightly report');
    await page.click('td a');
    await waitForText(page, 'h1', 'Nightly report');
    const nextRun = await page.$eval('dd time', (el) => el.getAttribute('datetime'));
    expect(nextRun).toBe(created.body.history && (created.body.history as Json).next_run);
  });

  it("shows an event endpoint's attempts (status, latency, error, next retry) and replays an event", async () => {
    const created = await apiCall(platform, 'POST', '/event-endpoints', {
      url: rx.url,
      event_types: ['run.succeeded'],
      description: 'CI hook',
    });
    expect(created.status).toBe(201);
    const run = await createRun(platform, '@demo message done', 'Evented run');
    // Runs of earlier tests may end meanwhile: their events are taken and answered 200.
    let first = await rx.next();
    while (!first.body.includes(run.run_id)) {
      first.respond(200);
      first = await rx.next();
    }
    first.respond(503);
    const eventId = first.headers['webhook-id'] as string;

    await page.goto(`${origin}/console/events`);
    await waitForText(page, '.card h2 a', 'CI hook');
    await page.click('.card h2 a');
    await waitForText(page, 'h1', 'Attempts: CI hook');
    await waitForText(page, 'td code', eventId);
    const row = page.locator('tr', { hasText: eventId });
    await waitForText(page, 'td', 'run.succeeded');
    expect(await row.locator('td').nth(3).textContent()).toBe('503');
    expect(await row.locator('td').nth(4).textContent()).toMatch(/^\d+ ms$/);
    // The 503 is retried in a minute: the next retry is a time, not a dash.
    expect(await row.locator('td time').count()).toBe(2);
    await expect(row.locator('a.run-link').getAttribute('href')).resolves.toBe(`/console/runs/${run.run_id}`);
    await screenshot(page, 'event-attempts');

    await row.getByRole('button', { name: /Replay/ }).click();
    const replayed = await rx.next();
    expect(replayed.headers['webhook-id']).toBe(eventId);
    expect(replayed.body).toBe(first.body);
    replayed.respond(200);
    await waitForText(page, '[role=status]', 'Queued');
    // The 200 is recorded once the platform has read it, which may be after a refresh: refresh until it shows.
    for (let attempt = 1; ; attempt++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      const shown = await waitForText(page, 'td', '^200$', 2_000).then(
        () => true,
        (err: unknown) => (attempt < 30 ? false : Promise.reject(err)),
      );
      if (shown) break;
    }
  });

  it('works on a narrow screen and signs out', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${origin}/console/runs`);
    await waitForText(page, 'td a', 'Event burst');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'runs-narrow');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForSelector('#api-key');
    expect(
      (await fetch(`${origin}/console/api/session`, { headers: { cookie: 'conveyor_console=x' } })).status,
    ).toBe(401);
    expect(await page.context().cookies()).not.toContainEqual(
      expect.objectContaining({ name: 'conveyor_console' }),
    );
  });
});
