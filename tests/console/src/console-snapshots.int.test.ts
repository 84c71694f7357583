import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { apiCall, type Json, type RunningPlatform } from '@conveyor/testing';
import {
  screenshotsAtBothWidths,
  signIn,
  startConsole,
  waitForText,
  type ConsoleSetup,
} from './console-helpers';

/**
 * An environment's snapshot state on the environments page (docs/snapshots.md "State in the API"): the runner on
 * bubblewrap keeps real snapshots, so the page shows the state the API reports — none before the first run, ready
 * with the snapshot's ID after it. Which team sees which state is the security suite's test.
 */
describe('console: environment snapshot state', () => {
  const workspaceRoot = path.join(os.tmpdir(), `conveyor-console-snapshots-${randomUUID()}`);
  let setup: ConsoleSetup | undefined;
  let platform: RunningPlatform;
  let page: Page;
  let origin: string;

  beforeAll(async () => {
    setup = await startConsole({
      RUN_SANDBOX: 'bubblewrap',
      WORKSPACE_ROOT: workspaceRoot,
      RUN_DISK_MB: '64',
    });
    ({ platform, page, origin } = setup);
    await signIn(page, platform, platform.apiKey);
  }, 120_000);

  afterAll(async () => {
    await setup?.stop();
    await rm(workspaceRoot, { recursive: true, force: true });
  });

  it('shows none before the first run and ready with its ID once a run made it', async () => {
    const name = `Snapshotted ${randomUUID().slice(0, 8)}`;
    const created = await apiCall(platform, 'POST', '/agent/environments', {
      name,
      setup_commands: [`echo ${randomUUID()} > marker`],
    });
    expect(created.status).toBe(201);
    const uid = String(created.body.uid);
    const card = page.locator('.card.environment', { hasText: name });
    await page.goto(`${origin}/console/environments`);
    expect(await card.locator('.snapshot-status').textContent()).toBe('none yet');

    const run = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: '@demo message set up',
      config: { environment_id: uid },
    });
    expect(run.status).toBe(200);
    let state = '';
    while (!['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(state)) {
      await new Promise((r) => setTimeout(r, 200));
      state = String((await apiCall(platform, 'GET', `/agent/runs/${String(run.body.run_id)}`)).body.state);
    }
    expect(state).toBe('SUCCEEDED');
    const snapshot = (await apiCall(platform, 'GET', `/agent/environments/${uid}`)).body.snapshot as Json;
    expect(snapshot).toMatchObject({ state: 'ready', run_id: run.body.run_id });
    expect(String(snapshot.snapshot_id)).toMatch(/^[0-9a-f]{16}$/);

    await page.reload();
    await waitForText(
      page,
      '.card.environment .snapshot-status',
      `^ready ${String(snapshot.snapshot_id)} · `,
    );
    expect(await card.locator('.snapshot-status a').getAttribute('href')).toBe(
      `/console/runs/${String(run.body.run_id)}`,
    );
    await screenshotsAtBothWidths(page, 'environments-snapshot');
  });
});
