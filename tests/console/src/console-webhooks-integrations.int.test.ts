import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import {
  apiCall,
  createMember,
  otherTeamAdmin,
  startScriptedSlack,
  type Json,
  type RunningPlatform,
  type ScriptedSlack,
} from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import {
  screenshotsAtBothWidths,
  signIn,
  startConsole,
  statusesFromSession,
  waitForText,
  type ConsoleSetup,
} from './console-helpers';

const SLACK_TEAM = 'T0ACME';
const SLACK_BOT = 'U0CONVEYOR';
const BOT_TOKEN = `xoxb-1234-5678-${randomUUID().replace(/-/g, '')}`;
const SIGNING_SECRET = `slack-signing-${randomUUID()}`;

/**
 * Webhooks, automations and integrations from the console (docs/console.md), in real Chromium against the real
 * services and a scripted Slack Web API (`@conveyor/testing`, checking the bot token as Slack does): creation with
 * what is shown once, the payload filter checked against a pasted sample as it is typed, the API's 400 at the field,
 * an integration marked broken with Slack's reason, and a member who sees no admin action and whom the API refuses.
 */
describe('web console: webhooks, automations and integrations', () => {
  let setup: ConsoleSetup | undefined;
  let platform: RunningPlatform;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let slack: ScriptedSlack;
  let factoryId: string;
  let webhookUid: string;

  beforeAll(async () => {
    slack = await startScriptedSlack({ token: BOT_TOKEN, teamId: SLACK_TEAM, botUserId: SLACK_BOT });
    setup = await startConsole({ SLACK_API_URL: slack.url });
    ({ platform, browser, page, origin } = setup);
    await signIn(page, platform, platform.apiKey);
  }, 120_000);

  afterAll(async () => {
    await setup?.stop();
    await slack?.close();
  });

  const fill = (formId: string, label: string, value: string) =>
    page.locator(`#${formId}`).getByLabel(label, { exact: true }).fill(value);

  it('creates a factory and a webhook whose ingress URL and secret show once and work, after showing the API error at the field', async () => {
    await page.goto(`${origin}/console/webhooks`);
    await page.getByText('New factory').click();
    await fill('factory-create', 'Name', 'Console factory');
    await page.locator('#factory-create').getByRole('button', { name: 'Create factory' }).click();
    await page.getByRole('heading', { name: 'Console factory' }).waitFor();
    const factories = (await apiCall(platform, 'GET', '/factories')).body.factories as Json[];
    factoryId = String(factories.find((f) => f.name === 'Console factory')!.factory_id);

    const formId = `webhook-create-${factoryId}`;
    await page.locator(`section[aria-labelledby=factory-${factoryId}]`).getByText('New webhook').click();
    // No name: the API's 400 under the field, and nothing created.
    await page.locator(`#${formId}`).getByRole('button', { name: 'Create webhook' }).click();
    await page.locator(`#${formId}-name-error`).waitFor();
    expect(await page.locator(`#${formId}-name`).getAttribute('aria-invalid')).toBe('true');

    await fill(formId, 'Name', 'console-hook');
    await fill(formId, 'Delivery ID header', 'X-Delivery');
    await page.locator(`#${formId}`).getByRole('button', { name: 'Create webhook' }).click();
    await waitForText(page, '.shown-once', 'Ingress URL of console-hook');
    const [ingressUrl, secret] = await page.locator('.shown-once .secret-value').allTextContents();
    const webhooks = (await apiCall(platform, 'GET', `/factories/${factoryId}/webhooks`)).body
      .webhooks as Json[];
    expect(webhooks).toEqual([
      expect.objectContaining({ name: 'console-hook', auth_mode: 'token', delivery_id_header: 'x-delivery' }),
    ]);
    webhookUid = String(webhooks[0]!.webhook_uid);
    expect(JSON.stringify(webhooks)).not.toContain(secret);
    // What was shown once is what the sender needs: the ingress accepts a delivery with it.
    const delivered = await fetch(ingressUrl!, {
      method: 'POST',
      headers: { Authorization: `Bearer ${secret!}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ action: 'opened' }),
    });
    expect(delivered.status).toBe(202);
    await screenshotsAtBothWidths(page, 'webhooks');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('checks the payload filter against a pasted sample as it is typed, then creates, edits and deletes the automation', async () => {
    const formId = `automation-create-${factoryId}`;
    const check = page.locator(`#${formId}-check`);
    await page.goto(`${origin}/console/webhooks`);
    await page.locator(`section[aria-labelledby=factory-${factoryId}]`).getByText('New automation').click();
    await fill(formId, 'Name', 'console-triage');
    await fill(formId, 'Prompt', '@demo message triaged');
    await fill(formId, 'Sample body (JSON, not saved)', JSON.stringify({ action: 'closed' }));
    await fill(formId, 'Payload filter (JSON)', '{"action": ["opened"]}');
    await waitForText(
      page,
      `#${formId}-check`,
      '^Does not match — the payload does not match: payload.action',
    );
    expect(await page.locator(`#${formId}-trigger`).getAttribute('aria-describedby')).toContain(
      `${formId}-check`,
    );
    await fill(formId, 'Sample body (JSON, not saved)', JSON.stringify({ action: 'opened', number: 7 }));
    await waitForText(page, `#${formId}-check`, '^Matches — the payload matches the filter$');
    // A filter the API refuses: its 400 is shown at the field as it is typed...
    await fill(formId, 'Payload filter (JSON)', '{"action": "opened"}');
    await waitForText(page, `#${formId}-check`, '^The API refused it: .*action');
    await screenshotsAtBothWidths(page, 'automation-filter-refused');
    await page.setViewportSize({ width: 1400, height: 900 });
    // ...and saving it is refused at the same field.
    await page.locator(`#${formId}`).getByRole('button', { name: 'Create automation' }).click();
    await page.locator(`#${formId}-trigger-error`).waitFor();
    expect(await check.count()).toBe(1);

    await fill(formId, 'Payload filter (JSON)', '{"action": ["opened"]}');
    await waitForText(page, `#${formId}-check`, '^Matches');
    await page.locator(`#${formId}`).getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('heading', { name: 'console-triage' }).waitFor();
    const [automation] = (await apiCall(platform, 'GET', `/factories/${factoryId}/automations`)).body
      .automations as Json[];
    expect(automation).toMatchObject({
      name: 'console-triage',
      prompt: '@demo message triaged',
      enabled: true,
      trigger: { filter: { webhook_ids: [webhookUid], payload: { action: ['opened'] } } },
    });

    const id = String(automation!.automation_id);
    await page.getByRole('button', { name: 'Edit console-triage' }).click();
    await fill(`automation-edit-${id}`, 'Prompt', '@demo message triaged again');
    await page.locator(`#automation-edit-${id}`).getByRole('button', { name: 'Save automation' }).click();
    await waitForText(page, '.card .prompt', '^@demo message triaged again$');
    expect((await apiCall(platform, 'GET', `/factories/${factoryId}/automations/${id}`)).body.prompt).toBe(
      '@demo message triaged again',
    );

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete console-triage' }).click();
    await waitForText(page, `section[aria-labelledby=automations-${factoryId}]`, 'No automations\\.');
    expect((await apiCall(platform, 'GET', `/factories/${factoryId}/automations/${id}`)).status).toBe(404);
  });

  it("tests a sample only against the caller's own team's webhook", async () => {
    const other = await otherTeamAdmin(platform);
    const path = `/factories/${factoryId}/webhooks/${webhookUid}/test-filter`;
    const body = { sample_payload: { action: 'opened' }, filter: { payload: { action: ['opened'] } } };
    expect((await apiCall(platform, 'POST', path, body, other.key)).status).toBe(404);
    expect((await apiCall(platform, 'POST', path, body)).body).toMatchObject({ would_trigger: true });
  });

  it("registers a Slack app, shows Slack's refusal at the bot token field, shows it broken with Slack's reason, and removes it", async () => {
    const formId = 'register-slack';
    await page.goto(`${origin}/console/integrations`);
    await page.locator('section[aria-labelledby=integrations-slack] summary').click();
    await fill(formId, 'Name', 'acme');
    await page.locator(`#${formId}`).getByLabel('Factory', { exact: true }).selectOption(factoryId);
    await fill(formId, 'Bot token', 'xoxb-not-the-token');
    await fill(formId, 'Signing secret', SIGNING_SECRET);
    await page.locator(`#${formId}`).getByRole('button', { name: 'Register' }).click();
    await waitForText(page, `#${formId}-bot_token-error`, '^Slack refused bot_token: invalid_auth$');
    expect(await page.locator(`#${formId}-bot_token`).getAttribute('aria-invalid')).toBe('true');
    expect((await apiCall(platform, 'GET', '/integrations/slack-apps')).body.slack_apps).toEqual([]);
    await screenshotsAtBothWidths(page, 'integrations-refused');
    await page.setViewportSize({ width: 1400, height: 900 });

    // What was typed stays; the right token registers it.
    await fill(formId, 'Bot token', BOT_TOKEN);
    await page.locator(`#${formId}`).getByRole('button', { name: 'Register' }).click();
    await waitForText(page, 'section[aria-labelledby=integrations-slack] table', 'acme');
    const [app] = (await apiCall(platform, 'GET', '/integrations/slack-apps')).body.slack_apps as Json[];
    expect(app).toMatchObject({ name: 'acme', status: 'active', slack_team_id: SLACK_TEAM });
    expect(await page.content()).not.toContain(BOT_TOKEN);

    // Slack revokes the token; the next mention finds out, and the page shows Slack's reason.
    slack.revoked = true;
    const mention = JSON.stringify({
      type: 'event_callback',
      team_id: SLACK_TEAM,
      api_app_id: 'A0CONVEYOR',
      event_id: `Ev${randomUUID().replace(/-/g, '')}`,
      event: {
        type: 'app_mention',
        channel: 'C0GENERAL',
        user: 'U0ALICE',
        text: `<@${SLACK_BOT}> hi`,
        ts: '1800000000.000100',
      },
    });
    const sent = await fetch(String(app!.webhook_url), {
      method: 'POST',
      body: mention,
      headers: {
        'content-type': 'application/json',
        ...signWebhook('slack', { secret: SIGNING_SECRET, body: mention, now: new Date() }),
      },
    });
    expect(sent.status).toBe(200);
    for (let shown = false; !shown;) {
      await page.goto(`${origin}/console/integrations`);
      await page.locator('section[aria-labelledby=integrations-slack] table').waitFor();
      shown = (await page.locator('section[aria-labelledby=integrations-slack] .badge-broken').count()) > 0;
    }
    await waitForText(
      page,
      'section[aria-labelledby=integrations-slack] .reason',
      'Slack refused the bot token: token_revoked',
    );
    await screenshotsAtBothWidths(page, 'integrations');
    await page.setViewportSize({ width: 1400, height: 900 });

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Remove acme' }).click();
    await waitForText(page, 'section[aria-labelledby=integrations-slack]', 'None registered\\.');
    expect((await apiCall(platform, 'GET', '/integrations/slack-apps')).body.slack_apps).toEqual([]);
  }, 180_000);

  it('shows a member no admin action on webhooks, automations or integrations, and the API refuses them anyway', async () => {
    await apiCall(platform, 'POST', `/factories/${factoryId}/automations`, {
      name: 'admin-made',
      prompt: 'p',
      trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [webhookUid] } },
    });
    const automationId = String(
      ((await apiCall(platform, 'GET', `/factories/${factoryId}/automations`)).body.automations as Json[])[0]!
        .automation_id,
    );
    const member = await createMember(platform);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const mine = await context.newPage();
    try {
      await signIn(mine, platform, member.key);
      await mine.goto(`${origin}/console/webhooks`);
      await mine.getByRole('heading', { name: 'admin-made' }).waitFor();
      for (const text of ['New factory', 'New webhook', 'New automation'])
        expect(await mine.getByText(text).count()).toBe(0);
      for (const name of [/^Delete/, /^Edit/, /^Rotate secret/, /^Disable/])
        expect(await mine.getByRole('button', { name }).count()).toBe(0);
      await mine.goto(`${origin}/console/integrations`);
      await waitForText(mine, 'section[aria-labelledby=integrations-github]', 'None registered\\.');
      await waitForText(mine, 'section[aria-labelledby=integrations-slack]', "Only the team's admins");
      expect(await mine.locator('summary', { hasText: 'Register' }).count()).toBe(0);
      expect(await mine.getByRole('button', { name: /^(Register|Remove)/ }).count()).toBe(0);
      await screenshotsAtBothWidths(mine, 'member-integrations');

      const trigger = { provider: 'webhook', event: 'received', filter: { webhook_ids: [webhookUid] } };
      const automation = `/factories/${factoryId}/automations/${automationId}`;
      const refused = await statusesFromSession(mine, [
        ['POST', '/factories', { name: 'sneaky' }],
        ['POST', `/factories/${factoryId}/webhooks`, { name: 'sneaky' }],
        ['DELETE', `/factories/${factoryId}/webhooks/${webhookUid}`],
        ['POST', `/factories/${factoryId}/automations`, { name: 's', prompt: 'p', trigger }],
        ['PATCH', automation, { prompt: 'evil' }],
        ['DELETE', automation],
        [
          'POST',
          '/integrations/slack-apps',
          { name: 'sneaky', factory_id: factoryId, bot_token: 'xoxb-1', signing_secret: 'x'.repeat(16) },
        ],
        ['GET', '/integrations/slack-apps'],
      ]);
      expect(refused).toEqual([403, 403, 403, 403, 403, 403, 403, 403]);
    } finally {
      await context.close();
    }
  });
});
