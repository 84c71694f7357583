import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import {
  apiCall,
  createMember,
  runCli,
  type EventReceiver,
  type Json,
  type RunningPlatform,
} from '@conveyor/testing';
import {
  screenshotsAtBothWidths,
  signIn,
  startConsole,
  statusesFromSession,
  waitForText,
  type ConsoleSetup,
} from './console-helpers';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The console as a place to act (docs/console.md "Actions"), in real Chromium against the real services: each
 * action through its form, an invalid form showing the API's error at its field, and a member who sees no
 * admin-only action and whom the API refuses anyway.
 */
describe('web console actions', () => {
  let platform: RunningPlatform;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let rx: EventReceiver;
  let worker: ChildProcess | undefined;

  let setup: ConsoleSetup | undefined;

  beforeAll(async () => {
    setup = await startConsole({ WORKER_HEARTBEAT_INTERVAL_MS: '1000' });
    ({ platform, browser, page, origin, rx } = setup);
    await signIn(page, platform, platform.apiKey);
  }, 120_000);

  afterAll(async () => {
    if (worker?.exitCode === null) worker.kill('SIGKILL');
    await setup?.stop();
  });

  /** Fills a form field by its label, within the form with this id. */
  const fill = (formId: string, label: string, value: string) =>
    page.locator(`#${formId}`).getByLabel(label, { exact: true }).fill(value);

  it('starts a run from the form, then runs it again', async () => {
    await page.goto(`${origin}/console/runs`);
    await page.getByText('Start a run').click();
    await fill('start-run', 'Prompt', '@demo message Started from the console');
    await fill('start-run', 'Title', 'Console started run');
    await page.locator('#start-run').getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/console\/runs\/[^/]+$/);
    const firstUrl = page.url();
    await waitForText(page, 'h1', 'Console started run');
    await waitForText(page, '.message-agent .text', '^Started from the console$');
    await waitForText(page, '#run-state', 'SUCCEEDED');
    await screenshotsAtBothWidths(page, 'run');
    await page.setViewportSize({ width: 1400, height: 900 });

    await page.getByRole('button', { name: 'Run again' }).click();
    await page.waitForURL(
      (url) => url.toString() !== firstUrl && /\/console\/runs\/[^/]+$/.test(url.pathname),
    );
    await waitForText(page, '.message-agent .text', '^Started from the console$');
    const rerunId = page.url().split('/').pop()!;
    const rerun = (await apiCall(platform, 'GET', `/agent/runs/${rerunId}`)).body;
    expect(rerun).toMatchObject({
      title: 'Console started run',
      prompt: '@demo message Started from the console',
    });
  });

  it('starts a run with an attachment, and shows the API refusing one over the limit at the field', async () => {
    // A 1×1 PNG: the run is told its path; the API checks the type and size, the form only lists them.
    const pixel = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    await page.goto(`${origin}/console/runs`);
    await page.getByText('Start a run').click();
    await fill('start-run', 'Prompt', '@demo attachments');
    await fill('start-run', 'Title', 'Console run with an attachment');
    const attachments = page.locator('#start-run').getByLabel('Attachments', { exact: true });
    // Over the limit first: 5 MiB + 1 byte of PNG-typed data, within the API's body limit once base64.
    await attachments.setInputFiles({
      name: 'huge.png',
      mimeType: 'image/png',
      buffer: Buffer.alloc(5 * 1024 * 1024 + 1, 1),
    });
    await waitForText(page, '#start-run .chosen-files', '^huge\\.png — 5\\.2 MB$');
    await page.locator('#start-run').getByRole('button', { name: 'Start run' }).click();
    await waitForText(page, '#start-run-attachments-error', 'at most 5242880 bytes');
    expect(await attachments.getAttribute('aria-invalid')).toBe('true');
    expect(page.url()).toMatch(/\/console\/runs$/);
    await screenshotsAtBothWidths(page, 'start-run-attachment-refused');
    await page.setViewportSize({ width: 1400, height: 900 });

    await attachments.setInputFiles({ name: 'pixel.png', mimeType: 'image/png', buffer: pixel });
    await waitForText(page, '#start-run .chosen-files', `^pixel\\.png — ${pixel.length} B$`);
    await page.locator('#start-run').getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/console\/runs\/[^/]+$/);
    await waitForText(page, '.message-agent .text', '^Attachments: attachments/pixel\\.png$');
    await waitForText(page, '#run-state', 'SUCCEEDED');
  });

  it("keeps the runs list's pager in view at the bottom of a long list", async () => {
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        apiCall(platform, 'POST', '/agent/runs', { prompt: '@demo message filler', title: `Filler ${i}` }),
      ),
    );
    await page.setViewportSize({ width: 1400, height: 500 });
    await page.goto(`${origin}/console/runs?limit=10`);
    await page.getByRole('link', { name: 'Next page' }).waitFor();
    const pager = await page.$eval('nav.pager', (el) => el.getBoundingClientRect().bottom);
    expect(pager).toBeLessThanOrEqual(500);
    await screenshotsAtBothWidths(page, 'runs');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('shows the API error at the field of an invalid environment, then creates and edits one', async () => {
    await page.goto(`${origin}/console/environments`);
    await page.getByText('New environment').click();
    await fill('env-create', 'Name', 'Console env');
    await fill('env-create', 'Repositories', 'https://git.example/acme/app.git');
    await fill('env-create', 'Setup commands', 'npm ci\nnpm run build');
    await fill('env-create', 'Allowed hosts', 'registry.npmjs.org\nnot a host!');
    await page
      .locator('#env-create')
      .getByLabel(/Snapshot after setup/)
      .uncheck();
    await page.locator('#env-create').getByRole('button', { name: 'Create' }).click();
    // The API's own message, under the field it names; what was typed stays.
    const hosts = page.locator('#env-create-allowed_hosts');
    await page.locator('#env-create-allowed_hosts-error').waitFor();
    expect(await hosts.getAttribute('aria-invalid')).toBe('true');
    expect(await hosts.getAttribute('aria-describedby')).toContain('env-create-allowed_hosts-error');
    expect(await hosts.inputValue()).toContain('not a host!');
    await screenshotsAtBothWidths(page, 'environments-invalid');
    await page.setViewportSize({ width: 1400, height: 900 });

    await fill('env-create', 'Allowed hosts', 'registry.npmjs.org\n*.example.com');
    await page.locator('#env-create').getByRole('button', { name: 'Create' }).click();
    await waitForText(page, '#env-create [role=status]', 'Environment created');
    const card = page.locator('.card.environment', { hasText: 'Console env' });
    await card.waitFor();
    expect(await card.locator('.snapshot-state').textContent()).toBe('off');
    const env = ((await apiCall(platform, 'GET', '/agent/environments')).body.environments as Json[]).find(
      (e) => (e.config as Json).name === 'Console env',
    )!;
    expect(env.config).toMatchObject({
      setup_commands: ['npm ci', 'npm run build'],
      allowed_hosts: ['registry.npmjs.org', '*.example.com'],
      snapshot: false,
      repositories: [{ url: 'https://git.example/acme/app.git' }],
    });

    await card.getByRole('button', { name: /Edit/ }).click();
    const editId = `env-edit-${String(env.uid)}`;
    await fill(editId, 'Setup commands', 'npm ci');
    await page
      .locator(`#${editId}`)
      .getByLabel(/Snapshot after setup/)
      .check();
    await page.locator(`#${editId}`).getByRole('button', { name: 'Save' }).click();
    await waitForText(page, '.card.environment .snapshot-state', '^on$');
    expect(
      (await apiCall(platform, 'GET', `/agent/environments/${String(env.uid)}`)).body.config,
    ).toMatchObject({
      setup_commands: ['npm ci'],
      snapshot: true,
    });

    await fill(`guest-${String(env.uid)}`, "Guest's e-mail", 'guest@example.org');
    await card.getByRole('button', { name: 'Invite guest' }).click();
    await waitForText(page, '.guests li', 'guest@example.org invited');
    await screenshotsAtBothWidths(page, 'environments');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('sets a secret whose value the page never shows, and replaces it', async () => {
    await page.goto(`${origin}/console/secrets`);
    await fill('secret-form', 'Name', 'DEPLOY_TOKEN');
    await fill('secret-form', 'Value', 'hunter2-first-value');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await waitForText(page, 'td code', '^DEPLOY_TOKEN$');
    expect(await page.locator('#secret-form-value').inputValue()).toBe('');
    expect(await page.content()).not.toContain('hunter2-first-value');

    await fill('secret-form', 'Name', 'DEPLOY_TOKEN');
    await fill('secret-form', 'Value', 'hunter2-second-value');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await waitForText(page, '#secret-form [role=status]', 'Value of DEPLOY_TOKEN replaced');
    const listed = JSON.stringify((await apiCall(platform, 'GET', '/secrets')).body);
    expect(listed).toContain('DEPLOY_TOKEN');
    expect(listed).not.toContain('hunter2');
    await screenshotsAtBothWidths(page, 'secrets');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('creates an event endpoint whose secret shows once, keeps its ID inside its card, and rotates the secret', async () => {
    await page.goto(`${origin}/console/events`);
    await page.getByText('New event endpoint').click();
    await fill('endpoint-create', 'URL', rx.url);
    await page.locator('#endpoint-create').getByRole('button', { name: 'Create endpoint' }).click();
    await waitForText(page, '.shown-once code', '^whsec_');
    const secret = await page.locator('.shown-once code').textContent();
    const card = page.locator('.cards .card').first();
    await card.waitFor();
    const endpointId = (await card.locator('h2 a').textContent())!;

    // Not described: the card's heading is the long ID, which wraps instead of overflowing at 390 px.
    await page.setViewportSize({ width: 390, height: 900 });
    const overflow = await card.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.reload();
    await card.waitFor();
    expect(await page.content()).not.toContain(secret!);
    await screenshotsAtBothWidths(page, 'events');
    await page.setViewportSize({ width: 1400, height: 900 });

    await card.locator('h2 a').click();
    await waitForText(page, 'h1', endpointId);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await waitForText(page, '.shown-once code', '^whsec_');
    const rotated = await page.locator('.shown-once code').textContent();
    expect(rotated).not.toBe(secret);
    await waitForText(page, '.admin-controls p', 'previous secret signs alongside');
    await screenshotsAtBothWidths(page, 'event-endpoint');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('previews the next five fire times as the cron is typed, shows the API error at the field, and creates the schedule', async () => {
    // cron-parser is a chunk of its own that only the schedules page loads.
    const scripts: string[] = [];
    const onRequest = (r: Request) => {
      if (r.resourceType() === 'script') scripts.push(new URL(r.url()).pathname);
    };
    page.on('request', onRequest);
    await page.goto(`${origin}/console/runs`);
    await page.getByText('Start a run').waitFor();
    expect(scripts).toContain('/console/app.js');
    expect(scripts.filter((s) => s.includes('cron-preview'))).toEqual([]);
    await page.goto(`${origin}/console/schedules`);
    await page.getByText('New schedule').click();
    await fill('schedule-create', 'Name', 'Console nightly');
    await fill('schedule-create', 'Time zone', 'UTC');
    await fill('schedule-create', 'Cron', '30 2 * * *');
    await page.waitForFunction(() => document.querySelectorAll('.cron-preview li').length === 5);
    page.off('request', onRequest);
    expect(scripts.filter((s) => /^\/console\/chunks\/cron-preview-\w+\.js$/.test(s))).toHaveLength(1);
    const times = await page.$$eval('.cron-preview time', (els) =>
      els.map((el) => el.getAttribute('datetime')),
    );
    expect(times.every((t) => /T02:30:00\.000Z$/.test(t!))).toBe(true);
    await fill('schedule-create', 'Cron', '0 25 * * *');
    await waitForText(page, '.cron-preview .field-error', '25');

    await fill('schedule-create', 'Prompt', 'Write the nightly report');
    await page.locator('#schedule-create').getByRole('button', { name: 'Create schedule' }).click();
    await waitForText(page, '#schedule-create-cron_schedule-error', 'expected range 0-23');
    await waitForText(page, '#schedule-create [role=alert]', 'fields marked above');
    await screenshotsAtBothWidths(page, 'schedules');
    await page.setViewportSize({ width: 1400, height: 900 });

    await fill('schedule-create', 'Cron', '30 2 * * *');
    await page.locator('#schedule-create').getByRole('button', { name: 'Create schedule' }).click();
    await page.waitForURL(/\/console\/schedules\/[^/]+$/);
    await waitForText(page, 'h1', 'Console nightly');
  });

  it('creates an agent identity, a key shown once, and revokes the key', async () => {
    await page.goto(`${origin}/console/identities`);
    await page.getByText('New agent identity').click();
    await fill('identity-create', 'Name', 'Console reviewer');
    await page.getByRole('button', { name: 'Create identity' }).click();
    const card = page.locator('.card.identity', { hasText: 'Console reviewer' });
    await card.waitFor();
    await card.getByLabel('Key name').fill('ci');
    await card.getByRole('button', { name: 'Create key' }).click();
    await waitForText(page, '.card.identity .shown-once code', '.');
    const key = (await card.locator('.shown-once code').textContent())!;
    // The key works as a Bearer key of the identity.
    expect((await apiCall(platform, 'GET', '/agent/runs', undefined, key)).status).toBe(200);
    await screenshotsAtBothWidths(page, 'identities');
    await page.setViewportSize({ width: 1400, height: 900 });

    await card.getByRole('button', { name: /Revoke/ }).click();
    await waitForText(page, '.card.identity .keys .tag', 'revoked');
    expect((await apiCall(platform, 'GET', '/agent/runs', undefined, key)).status).toBe(401);
  });

  it('lists a connected self-hosted worker with its capacity and health', async () => {
    const { token } = JSON.parse(
      await runCli(['worker-token', 'create', '--team', 'team_dev', '--name', 'console'], platform.env),
    ) as { token: string };
    worker = spawn(process.execPath, [path.join(ROOT, 'services/runner/dist/worker-main.js')], {
      env: {
        ...process.env,
        WORKER_ENDPOINT: platform.workerEndpointAddr,
        WORKER_ENDPOINT_CA_FILE: platform.trust.caFile,
        WORKSPACE_ROOT: path.join(os.tmpdir(), `worker-${randomUUID()}`),
        RUN_SANDBOX: 'none',
        RUN_SANDBOX_NONE_ACKNOWLEDGED: 'runs-are-not-isolated',
        CONVEYOR_WORKER_TOKEN: token,
        WORKER_ID: 'console-box',
        WORKER_CAPACITY: '3',
      },
      stdio: 'ignore',
    });
    await page.goto(`${origin}/console/workers`);
    await page.waitForFunction(
      () => {
        if (document.querySelector('tbody td code')?.textContent === 'console-box') return true;
        (
          Array.from(document.querySelectorAll('button')).find(
            (b) => b.textContent === 'Refresh',
          ) as HTMLElement
        )?.click();
        return false;
      },
      undefined,
      { timeout: 60_000, polling: 500 },
    );
    const row = page.locator('tr', { hasText: 'console-box' });
    expect(await row.locator('td').nth(1).textContent()).toBe('healthy');
    expect(await row.locator('td').nth(2).textContent()).toBe('0 / 3');
    await screenshotsAtBothWidths(page, 'workers');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('shows a member no admin-only action, and the API refuses them anyway', async () => {
    const environmentUid = String(
      ((await apiCall(platform, 'GET', '/agent/environments')).body.environments as Json[])[0]!.uid,
    );
    const endpointId = String(
      ((await apiCall(platform, 'GET', '/event-endpoints')).body.endpoints as Json[])[0]!.endpoint_id,
    );
    const identityUid = String(
      ((await apiCall(platform, 'GET', '/agent/identities')).body.agents as Json[])[0]!.uid,
    );
    const member = await createMember(platform);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const mine = await context.newPage();
    try {
      await signIn(mine, platform, member.key);
      await mine.goto(`${origin}/console/events`);
      await mine.locator('.cards .card').first().waitFor();
      expect(await mine.getByText('New event endpoint').count()).toBe(0);
      await mine.goto(`${origin}/console/events/${endpointId}`);
      await waitForText(mine, 'h1', 'Attempts');
      await mine.getByRole('button', { name: 'Refresh' }).waitFor();
      expect(await mine.getByRole('button', { name: 'Rotate secret' }).count()).toBe(0);
      await mine.goto(`${origin}/console/identities`);
      await mine.locator('.card.identity').first().waitFor();
      expect(await mine.getByText('New agent identity').count()).toBe(0);
      expect(await mine.getByRole('button', { name: 'Create key' }).count()).toBe(0);
      await mine.goto(`${origin}/console/environments`);
      await mine.locator('.card.environment').first().waitFor();
      expect(await mine.getByRole('button', { name: /Edit/ }).count()).toBe(0);
      expect(await mine.getByRole('button', { name: 'Invite guest' }).count()).toBe(0);
      await mine.goto(`${origin}/console/secrets`);
      await waitForText(mine, 'h1', 'Secrets');
      expect(await mine.locator('#secret-form').count()).toBe(0);
      await screenshotsAtBothWidths(mine, 'member-environments');

      // The same requests the hidden buttons would send, from the member's own session: each refused.
      const refused = await statusesFromSession(mine, [
        ['POST', `/event-endpoints/${endpointId}/rotate-secret`],
        ['POST', '/event-endpoints', { url: 'https://example.org/hook', event_types: ['*'] }],
        ['POST', '/agent/identities', { name: 'sneaky' }],
        ['POST', `/agent/identities/${identityUid}/api-keys`, {}],
        ['PUT', `/agent/environments/${environmentUid}`, { setup_commands: ['curl evil'] }],
        ['POST', '/secrets', { name: 'SNEAKY', value: 'x' }],
      ]);
      expect(refused).toEqual([403, 403, 403, 403, 403, 403]);
    } finally {
      await context.close();
    }
  });
});
