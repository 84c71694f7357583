import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  startGitHttpServer,
  startScriptedGitHub,
  type GitHttpServer,
  type ScriptedGitHub,
} from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { AGENT_SETUP, agentWorkLog, branchLog, git, hasBranch, seedRemote } from './git-remote';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState, type Json } from './run-waits';
import { webhookApi } from './webhook-helpers';

// repositories[].pull_request (docs/harnesses.md "Pull requests"): the orchestrator pushes conveyor/run-<id> to a real
// git server (git http-backend) and opens the pull request on a scripted GitHub REST API at a local port (a GitHub
// Enterprise Server's GITHUB_API_URL, as far as the platform knows), with the push secret's token.
jest.setTimeout(180_000);

describe('pull requests from the pushed branch', () => {
  let platform: RunningPlatform;
  let root: string;
  let remote: string;
  let http: GitHttpServer;
  let github: ScriptedGitHub;
  const token = `ghp_${randomUUID().replace(/-/g, '')}`;
  const url = () => `${http.url}/acme/widgets.git`;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'pull-requests-'));
    remote = seedRemote(root, 'acme/widgets');
    // A bare token is pushed as x-access-token:<token>, as GitHub takes it.
    http = await startGitHttpServer(root, `x-access-token:${token}`);
    github = await startScriptedGitHub({
      token,
      branchExists: (fullName, branch) => fullName === 'acme/widgets' && hasBranch(remote, branch),
    });
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'none',
        GIT_ALLOWED_SCHEMES: 'https,http',
        EGRESS_ALLOWED_ADDRESSES: `${new URL(http.url).host},${new URL(github.url).host}`,
        GITHUB_API_URL: github.url,
      },
    });
    expect((await apiCall(platform, 'PUT', '/secrets/GH_TOKEN', { value: token })).status).toBe(200);
  });
  afterEach(() => {
    github.token = token;
    github.openElsewhere = () => false;
  });
  afterAll(async () => {
    await platform?.stop();
    await http?.close();
    await github?.close();
    await rm(root, { recursive: true, force: true });
  });

  async function environment(pullRequest: Json): Promise<string> {
    const created = await apiCall(platform, 'POST', '/agent/environments', {
      name: `pr ${randomUUID()}`,
      repositories: [
        { url: url(), directory: 'origin', push_secret_name: 'GH_TOKEN', pull_request: pullRequest },
      ],
      setup_commands: [AGENT_SETUP],
    });
    expect(created.status).toBe(201);
    return created.body.uid as string;
  }

  async function run(environmentId: string): Promise<{ runId: string; done: Json }> {
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: '@demo message done',
      title: 'Rename the world',
      config: { environment_id: environmentId },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    return { runId, done: await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000) };
  }

  /** The token must be nowhere but the Authorization headers: not in logs, the run, its timeline or its artifacts. */
  async function expectTokenNowhere(runId: string): Promise<void> {
    const everything = [
      platform.logs(),
      JSON.stringify((await apiCall(platform, 'GET', `/agent/runs/${runId}`)).body),
      JSON.stringify((await apiCall(platform, 'GET', `/agent/runs/${runId}/timeline`)).body),
    ].join('\n');
    expect(everything).not.toContain(token);
  }

  const artifactsOf = (done: Json, type: string) =>
    (done.artifacts as Json[]).filter((a) => a.artifact_type === type);

  it('opens a draft pull request from conveyor/run-<id> into the default branch and reports it as PULL_REQUEST', async () => {
    const { runId, done } = await run(await environment({ draft: true }));
    expect(done.state).toBe('SUCCEEDED');
    const branch = `conveyor/run-${runId}`;
    expect(branchLog(remote, branch)).toEqual(agentWorkLog(runId));
    const pull = github.pulls.get(`acme/widgets:${branch}`);
    expect(pull).toMatchObject({ base: 'main', draft: true, title: 'Rename the world' });
    expect(pull?.body).toContain(`/console/runs/${runId}`);
    expect(artifactsOf(done, 'PULL_REQUEST').map((a) => a.data)).toEqual([
      expect.objectContaining({ url: `https://github.test/acme/widgets/pull/${pull!.number}`, branch }),
    ]);
    // GitHub was called with the token; the base was learned from the repository (no ref, no base given).
    const calls = github.requests.filter((r) => r.path.startsWith('/repos/acme/widgets'));
    expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['GET /repos/acme/widgets', 'POST /repos/acme/widgets/pulls']),
    );
    for (const call of calls) expect(call.authorization).toBe(`Bearer ${token}`);
    await expectTokenNowhere(runId);
  });

  it("a follow-up execution updates the run's open pull request and reports it again instead of failing", async () => {
    const { runId, done } = await run(await environment({}));
    expect(done.state).toBe('SUCCEEDED');
    const branch = `conveyor/run-${runId}`;
    const opened = artifactsOf(done, 'PULL_REQUEST').map((a) => a.data as Json);
    expect(opened).toHaveLength(1);
    const firstHead = git(['--git-dir', remote, 'rev-parse', branch]);

    const followup = await apiCall(platform, 'POST', `/agent/runs/${runId}/followups`, {
      message: '@demo message again',
    });
    expect(followup.body).toMatchObject({ routed_to: 'new_execution' });
    const again = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
    expect(again.state).toBe('SUCCEEDED');
    // One pull request on GitHub; the second execution found it (GET …/pulls?head=) and reported the same one.
    expect([...github.pulls.keys()].filter((k) => k.endsWith(branch))).toHaveLength(1);
    expect(artifactsOf(again, 'PULL_REQUEST').map((a) => a.data)).toEqual([opened[0], opened[0]]);
    expect(github.requests.map((r) => `${r.method} ${r.path}`)).toContain('GET /repos/acme/widgets/pulls');
    // The follow-up started from a fresh clone of main (or the environment's snapshot): its work, a commit of its own
    // even when its changes are the first execution's, is merged with the first execution's on the branch (a
    // fast-forward of it, never a force-push that would drop the first execution's commits).
    const [merge, ...secondWork] = git([
      '--git-dir',
      remote,
      'log',
      '--first-parent',
      '--format=%s',
      branch,
    ]).split('\n');
    expect(merge).toBe(`conveyor: run ${runId}, merged with ${branch}`);
    expect(secondWork).toEqual([`conveyor: run ${runId}, execution 2`, ...agentWorkLog(runId).slice(1)]);
    expect(git(['--git-dir', remote, 'rev-parse', `${branch}^2`])).toBe(firstHead);
    await expectTokenNowhere(runId);
  });

  it.each([
    [
      'a base branch that does not exist',
      { base: 'no-such-branch', title: 'Into nowhere' },
      undefined,
      'invalid_request',
      /base branch "no-such-branch" does not exist/,
    ],
    [
      'a pull request already open from the branch',
      {},
      () => (github.openElsewhere = () => true),
      'conflict',
      /already open.*A pull request already exists/,
    ],
    [
      'a token GitHub refuses (401)',
      {},
      () => (github.token = 'revoked'),
      'external_authentication_required',
      /GitHub refused the push secret's token.*401: Bad credentials/,
    ],
  ])(
    '%s fails the run with a stable code and keeps the branch',
    async (_what, spec, script, code, message) => {
      script?.();
      const { runId, done } = await run(await environment(spec));
      const branch = `conveyor/run-${runId}`;
      expect(done).toMatchObject({
        state: 'FAILED',
        status_message: { message: expect.stringMatching(message) },
      });
      expect(JSON.stringify(done)).toContain(code);
      expect(hasBranch(remote, branch)).toBe(true);
      expect(artifactsOf(done, 'EXTERNAL_REFERENCE').map((a) => a.data)).toEqual([
        expect.objectContaining({ reference_type: 'git_branch', title: branch }),
      ]);
      expect(artifactsOf(done, 'PULL_REQUEST')).toEqual([]);
      await expectTokenNowhere(runId);
    },
  );

  it('a run started by a GitHub delivery about an issue comments there with the result, the pull request and the session link', async () => {
    const w = webhookApi(platform);
    const factoryId = await w.factory();
    const hook = await w.webhook(factoryId, {
      name: 'github',
      auth_mode: 'signature',
      signature_scheme: 'github',
      provider_secret: 'github-webhook-secret-0123456789',
    });
    const automation = await w.api('POST', `/factories/${factoryId}/automations`, {
      name: 'fix issues',
      prompt: '@demo message done',
      agent_config: { environment_id: await environment({}) },
      trigger: {
        provider: 'webhook',
        event: 'received',
        filter: { webhook_ids: [hook.webhook_uid], payload: { action: ['opened'] } },
      },
    });
    expect(automation.status).toBe(201);
    const body = JSON.stringify({
      action: 'opened',
      issue: { number: 42, title: 'The world needs renaming' },
      repository: { full_name: 'acme/widgets' },
    });
    const headers = {
      ...signWebhook('github', { secret: 'github-webhook-secret-0123456789', body, now: new Date() }),
      'x-github-delivery': randomUUID(),
      'x-github-event': 'issues',
    };
    expect((await fetch(hook.ingress_url, { method: 'POST', body, headers })).status).toBe(202);
    const [entry] = await w.waitForDeliveries(
      factoryId,
      hook.webhook_uid,
      (e) => e.length === 1 && (e[0]!.run_ids as string[]).length === 1,
      'the run of the delivery',
    );
    const runId = (entry!.run_ids as string[])[0]!;
    expect((await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000)).state).toBe(
      'SUCCEEDED',
    );
    const deadline = Date.now() + 20_000;
    while (!github.comments.has('acme/widgets#42') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const [comment] = github.comments.get('acme/widgets#42') ?? [];
    const pull = github.pulls.get(`acme/widgets:conveyor/run-${runId}`);
    expect(comment).toContain('SUCCEEDED');
    expect(comment).toContain(`https://github.test/acme/widgets/pull/${pull!.number}`);
    expect(comment).toContain(`/console/runs/${runId}`);
    expect(comment).not.toContain(token);
  });
});
