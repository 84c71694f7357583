import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import {
  apiCall,
  startScriptedGitHub,
  type Json,
  type RunningPlatform,
  type ScriptedGitHub,
} from '@conveyor/testing';
import { signIn, startConsole, waitForText, type ConsoleSetup } from './console-helpers';

/**
 * "Create on GitHub" on the integrations page (docs/integrations.md "GitHub App"), in real Chromium: the page posts the
 * manifest form to a scripted GitHub (GITHUB_WEB_URL, allowed by the console's form-action), which sends the browser
 * back to the API's callback with a code; the API registers the App with the key GitHub issued and returns the
 * browser to the integrations page. Nothing is pasted.
 */
describe('console: a GitHub App created on GitHub', () => {
  let setup: ConsoleSetup | undefined;
  let platform: RunningPlatform;
  let page: Page;
  let origin: string;
  let github: ScriptedGitHub;

  beforeAll(async () => {
    github = await startScriptedGitHub({
      token: `ghp_${randomUUID().replace(/-/g, '')}`,
      branchExists: () => false,
    });
    setup = await startConsole({
      EGRESS_ALLOWED_ADDRESSES: new URL(github.url).host,
      GITHUB_API_URL: github.url,
      GITHUB_WEB_URL: github.url,
    });
    ({ platform, page, origin } = setup);
    await signIn(page, platform, platform.apiKey);
  }, 120_000);

  afterAll(async () => {
    await setup?.stop();
    await github?.close();
  });

  it('creates the App on GitHub in one click and comes back to the page with it registered', async () => {
    const factory = await apiCall(platform, 'POST', '/factories', { name: 'github' });
    const formId = 'create-github-app';
    await page.goto(`${origin}/console/integrations`);
    await page
      .locator('section[aria-labelledby=integrations-github] summary', { hasText: 'Create on GitHub' })
      .click();
    await page.locator(`#${formId}`).getByLabel('Name', { exact: true }).fill('from-console');
    await page
      .locator(`#${formId}`)
      .getByLabel('Factory', { exact: true })
      .selectOption(factory.body.factory_id as string);
    await page.locator(`#${formId}`).getByLabel('Trigger label', { exact: true }).fill('agent');
    await page.locator(`#${formId}`).getByRole('button', { name: 'Create on GitHub' }).click();

    await waitForText(page, 'p[role=status]', 'created on GitHub and registered');
    expect(new URL(page.url()).pathname).toBe('/console/integrations');
    const [app] = (await apiCall(platform, 'GET', '/integrations/github-apps')).body.github_apps as Json[];
    expect(app).toMatchObject({
      name: 'from-console',
      app_id: github.manifestApps[0]!.id,
      trigger_label: 'agent',
      status: 'active',
    });
    expect(page.url()).toContain(`github_app=${app!.github_app_id as string}`);
    // The manifest the browser posted names the App's webhook and the API's callback.
    expect(github.manifestApps[0]!.manifest).toMatchObject({
      hook_attributes: { url: app!.webhook_url },
      redirect_url: `${platform.apiUrl}/integrations/github-apps/manifest/callback`,
    });
    await waitForText(page, 'section[aria-labelledby=integrations-github] table', 'from-console');
  });
});
