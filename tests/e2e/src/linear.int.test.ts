import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  linearIssueAssigned,
  otherTeamAdmin,
  startGitHttpServer,
  startScriptedGitHub,
  startScriptedLinear,
  type GitHttpServer,
  type ScriptedGitHub,
  type ScriptedLinear,
} from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { AGENT_SETUP, hasBranch, seedRemote } from './git-remote';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, eventually, waitForRunState, type Json } from './run-waits';
import { integrationRegistration, webhookApi } from './webhook-helpers';

// A team's Linear integration (docs/integrations.md "Linear") against a scripted Linear GraphQL API that checks the
// key as Linear does (a personal API key as the whole Authorization header), a scripted GitHub and a real git server
// for the pull request: issue assigned to the agent's user → run → a comment with the pull request and the issue moved
// → a comment with the outcome and the issue moved again. Deliveries are signed as Linear signs them.
jest.setTimeout(240_000);

const AGENT = { id: `user-${randomUUID()}`, name: 'conveyor' };
const API_KEY = `lin_api_${randomUUID().replace(/-/g, '')}`;
const WEBHOOK_SECRET = `lin_wh_${randomUUID().replace(/-/g, '')}`;
const IN_REVIEW = 'state-in-review';
const DONE = 'state-done';

describe('Linear integration', () => {
  let platform: RunningPlatform;
  let root: string;
  let http: GitHttpServer;
  let github: ScriptedGitHub;
  let linear: ScriptedLinear;
  let factoryId: string;
  let environmentId: string;
  const pat = `ghp_${randomUUID().replace(/-/g, '')}`;
  const url = () => `${http.url}/acme/widgets.git`;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'linear-'));
    const remote = seedRemote(root, 'acme/widgets');
    http = await startGitHttpServer(root, `x-access-token:${pat}`);
    github = await startScriptedGitHub({
      token: pat,
      branchExists: (fullName, branch) => fullName === 'acme/widgets' && hasBranch(remote, branch),
    });
    linear = await startScriptedLinear({ apiKey: API_KEY, viewer: AGENT });
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'none',
        GIT_ALLOWED_SCHEMES: 'https,http',
        EGRESS_ALLOWED_ADDRESSES: [http.url, github.url, linear.url].map((u) => new URL(u).host).join(','),
        GITHUB_API_URL: github.url,
        LINEAR_API_URL: linear.url,
        LINEAR_REPORT_RETRY_SCHEDULE_MS: '0,100,100,100,100',
        // The suite's integrations start 3 runs before the last test, which meets the limit.
        LINEAR_RUNS_PER_HOUR: '4',
      },
    });
    expect((await apiCall(platform, 'PUT', '/secrets/GH_TOKEN', { value: pat })).status).toBe(200);
    factoryId = await webhookApi(platform).factory();
    const environment = await apiCall(platform, 'POST', '/agent/environments', {
      name: `linear ${randomUUID()}`,
      repositories: [{ url: url(), directory: 'origin', push_secret_name: 'GH_TOKEN', pull_request: {} }],
      setup_commands: [AGENT_SETUP],
    });
    expect(environment.status).toBe(201);
    environmentId = environment.body.uid as string;
  });
  afterAll(async () => {
    await platform?.stop();
    await http?.close();
    await github?.close();
    await linear?.close();
    await rm(root, { recursive: true, force: true });
  });

  const register = integrationRegistration(
    () => platform,
    '/integrations/linear',
    () => ({
      factory_id: factoryId,
      api_key: API_KEY,
      webhook_secret: WEBHOOK_SECRET,
      environment_id: environmentId,
      trigger_label: 'agent',
      team_repositories: { ENG: url() },
      pr_opened_state_id: IN_REVIEW,
      run_ended_state_id: DONE,
    }),
  );

  const sign = (body: string, secret = WEBHOOK_SECRET) => ({
    ...signWebhook('linear', { secret, body, now: new Date() }),
    'linear-event': 'Issue',
    'content-type': 'application/json',
  });
  const deliver = (integration: Json, payload: Json, secret = WEBHOOK_SECRET) => {
    const body = JSON.stringify(payload);
    return fetch(integration.webhook_url as string, {
      method: 'POST',
      body,
      headers: { ...sign(body, secret), 'linear-delivery': randomUUID() },
    });
  };

  /** Linear's Issue webhook for an issue just assigned to the agent's user. */
  const assigned = (issueId: string, at = Date.now()) =>
    linearIssueAssigned({
      issueId,
      number: 7,
      title: 'Rename the world',
      assigneeId: AGENT.id,
      webhookId: 'webhook-1',
      at,
    });

  const deliveries = (integration: Json) =>
    webhookApi(platform).deliveries(factoryId, integration.webhook_uid as string);
  const runsOf = async (integration: Json) =>
    (await deliveries(integration)).flatMap((d) => d.run_ids as string[]);
  const settled = (integration: Json, count: number, what: string) =>
    webhookApi(platform).waitForDeliveries(
      factoryId,
      integration.webhook_uid as string,
      (e) => e.length === count && e.every((d) => d.processed_at || d.label !== 'Accepted'),
      what,
    );

  it("registers with the key checked by Linear's viewer query; never shows the key; other teams see nothing", async () => {
    const refused = await register('wrong', { api_key: 'lin_api_not-the-key' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('You need to authenticate to access this operation.');
    expect(JSON.stringify(refused.body)).not.toContain('lin_api_not-the-key');

    const created = await register('main');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agent_user_id: AGENT.id, agent_name: 'conveyor', status: 'active' });
    const listed = await apiCall(platform, 'GET', '/integrations/linear');
    expect((listed.body.linear_integrations as Json[]).map((l) => l.name)).toEqual([created.body.name]);
    for (const shown of [created.body, listed.body]) {
      expect(JSON.stringify(shown)).not.toContain(API_KEY);
      expect(JSON.stringify(shown)).not.toContain(WEBHOOK_SECRET);
    }
    // The key went to Linear as Linear takes a personal API key: the whole Authorization header.
    expect(linear.calls.filter((c) => c.operation === 'viewer').map((c) => c.authorization)).toContain(
      API_KEY,
    );

    const other = (await otherTeamAdmin(platform)).key;
    const id = created.body.linear_integration_id as string;
    const missing = await apiCall(platform, 'GET', `/integrations/linear/lin_missing`, undefined, other);
    const foreign = await apiCall(platform, 'GET', `/integrations/linear/${id}`, undefined, other);
    expect(missing.status).toBe(404);
    expect(foreign).toMatchObject({
      status: 404,
      body: { ...missing.body, instance: foreign.body.instance },
    });
    expect((await apiCall(platform, 'DELETE', `/integrations/linear/${id}`, undefined, other)).status).toBe(
      404,
    );
    expect((await apiCall(platform, 'GET', '/integrations/linear', undefined, other)).body).toEqual({
      linear_integrations: [],
    });
    expect((await apiCall(platform, 'DELETE', `/integrations/linear/${id}`)).status).toBe(204);
    expect((await apiCall(platform, 'GET', `/integrations/linear/${id}`)).status).toBe(404);
  });

  it('issue assigned → run → comment with the pull request and state moved → outcome comment and state moved', async () => {
    const integration = (await register('loop')).body;
    const issueId = `issue-${randomUUID()}`;
    // Linear is down for the first two report calls: the reports wait and go out after.
    linear.unavailable = 2;
    expect((await deliver(integration, assigned(issueId))).status).toBe(202);
    let runId = '';
    await eventually(
      async () => !!(runId = (await runsOf(integration))[0] ?? ''),
      'the run',
      platform,
      20_000,
    );
    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
    expect(done.state).toBe('SUCCEEDED');
    // Who asked and where, on the run.
    expect(done.source).toBe('LINEAR');
    expect(done.metadata).toMatchObject({
      linear_integration_id: integration.linear_integration_id,
      linear_issue_id: issueId,
      linear_issue_identifier: 'ENG-7',
      linear_actor: 'Alice',
      ticket_id: 'ENG-7',
    });
    const pull = github.pulls.get(`acme/widgets:conveyor/run-${runId}`);
    expect(pull).toBeDefined();
    await eventually(
      async () => (linear.states.get(issueId) ?? []).length === 2,
      'the issue moved twice',
      platform,
      30_000,
    );
    const comments = linear.comments.get(issueId) ?? [];
    expect(comments).toHaveLength(2);
    expect(comments[0]).toContain(`/pull/${pull!.number}`);
    expect(comments[1]).toContain('SUCCEEDED');
    expect(comments[1]).toContain(`/console/runs/${runId}`);
    expect(linear.states.get(issueId)).toEqual([IN_REVIEW, DONE]);
    expect(linear.unavailable).toBe(0);

    // A comment mentioning the agent on the issue: a follow-up of the same run, answered on the issue again.
    const comment = {
      action: 'create',
      type: 'Comment',
      actor: { id: 'user-alice', name: 'Alice', type: 'user' },
      data: { id: `comment-${randomUUID()}`, body: '@conveyor please say it louder', issueId },
      webhookTimestamp: Date.now(),
    };
    expect((await deliver(integration, comment)).status).toBe(202);
    await eventually(
      async () => (linear.states.get(issueId) ?? []).length === 3,
      'the follow-up answered on the issue',
      platform,
      90_000,
    );
    const again = await apiCall(platform, 'GET', `/agent/runs/${runId}`);
    expect(again.body).toMatchObject({ state: 'SUCCEEDED' });
    expect(linear.comments.get(issueId)).toHaveLength(3);
    expect(linear.comments.get(issueId)![2]).toContain('SUCCEEDED');
    expect(linear.states.get(issueId)).toEqual([IN_REVIEW, DONE, DONE]);
    // The same run went on: the comment started no new one.
    expect(await runsOf(integration)).toEqual([runId]);
    // Every report carried the key as Linear takes it; the key is nowhere else.
    for (const call of linear.calls.filter((c) => c.operation !== 'viewer'))
      expect(call.authorization).toBe(API_KEY);
    const everything = [
      platform.logs(),
      JSON.stringify(done),
      JSON.stringify((await apiCall(platform, 'GET', `/agent/runs/${runId}/timeline`)).body),
      JSON.stringify(await deliveries(integration)),
    ].join('\n');
    expect(everything).not.toContain(API_KEY);
  });

  it('wrong signatures, stale or missing webhookTimestamps and replays start nothing', async () => {
    const integration = (await register('guard')).body;
    expect(
      (await deliver(integration, assigned(`issue-${randomUUID()}`), 'not-the-secret-0123456789')).status,
    ).toBe(401);
    // Signed with the right secret, but sent 61 s after Linear stamped it: refused at the ingress.
    expect((await deliver(integration, assigned(`issue-${randomUUID()}`, Date.now() - 61_000))).status).toBe(
      401,
    );
    // Signed, without the timestamp Linear always sends: accepted, starts nothing.
    const { webhookTimestamp: _dropped, ...unstamped } = assigned(`issue-${randomUUID()}`);
    expect((await deliver(integration, unstamped)).status).toBe(202);
    // The same signed body twice under new delivery IDs: the second is a replay.
    const body = JSON.stringify(assigned(`issue-${randomUUID()}`));
    const send = () =>
      fetch(integration.webhook_url as string, {
        method: 'POST',
        body,
        headers: { ...sign(body), 'linear-delivery': randomUUID() },
      });
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    const entries = await settled(integration, 5, 'the five deliveries');
    expect(entries.map((e) => e.label).sort()).toEqual([
      'Accepted',
      'Accepted',
      'Duplicate',
      'Rejected (auth)',
      'Rejected (auth)',
    ]);
    const runs = entries.flatMap((e) => e.run_ids as string[]);
    expect(runs).toHaveLength(1);
    await waitForRunState(platform, runs[0]!, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
  });

  it("a key Linear refuses marks the integration broken with Linear's reason, and it then starts nothing", async () => {
    const integration = (await register('revoked')).body;
    linear.revoked = true;
    try {
      const issueId = `issue-${randomUUID()}`;
      expect((await deliver(integration, assigned(issueId))).status).toBe(202);
      let runId = '';
      await eventually(
        async () => !!(runId = (await runsOf(integration))[0] ?? ''),
        'the run',
        platform,
        20_000,
      );
      await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
      const id = integration.linear_integration_id as string;
      await eventually(
        async () => (await apiCall(platform, 'GET', `/integrations/linear/${id}`)).body.status === 'broken',
        'the integration broken',
        platform,
        30_000,
      );
      const shown = await apiCall(platform, 'GET', `/integrations/linear/${id}`);
      expect(shown.body.broken_reason).toBe('You need to authenticate to access this operation.');
      // One refused call, not a loop of them: the run's reports failed at once.
      const refusedCalls = () =>
        linear.calls.filter(
          (c) =>
            c.operation === 'commentCreate' &&
            c.variables.input &&
            (c.variables.input as Json).issueId === issueId,
        );
      expect(refusedCalls()).toHaveLength(1);
      expect(linear.comments.get(issueId)).toBeUndefined();

      expect((await deliver(integration, assigned(`issue-${randomUUID()}`))).status).toBe(202);
      const entries = await settled(integration, 2, 'the second delivery');
      expect(entries.flatMap((e) => e.run_ids as string[])).toEqual([runId]);
      const second = entries.find((e) => (e.run_ids as string[]).length === 0)!;
      const entry = await apiCall(
        platform,
        'GET',
        `/factories/${factoryId}/webhooks/${String(integration.webhook_uid)}/deliveries/${String(second.delivery_id)}`,
      );
      expect(JSON.stringify(entry.body)).toContain('the integration is broken: You need to authenticate');
    } finally {
      linear.revoked = false;
    }
  });

  it("the team's Linear runs per hour are limited: a delivery over the limit starts nothing and says why", async () => {
    const integration = (await register('limited')).body;
    expect((await deliver(integration, assigned(`issue-${randomUUID()}`))).status).toBe(202);
    expect((await deliver(integration, assigned(`issue-${randomUUID()}`))).status).toBe(202);
    const entries = await settled(integration, 2, 'both deliveries');
    const runs = entries.flatMap((e) => e.run_ids as string[]);
    expect(runs).toHaveLength(1);
    const limited = entries.find((e) => (e.run_ids as string[]).length === 0)!;
    const entry = await apiCall(
      platform,
      'GET',
      `/factories/${factoryId}/webhooks/${String(integration.webhook_uid)}/deliveries/${String(limited.delivery_id)}`,
    );
    expect(JSON.stringify(entry.body)).toContain('rate_limited: the team');
    await waitForRunState(platform, runs[0]!, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
  });
});
