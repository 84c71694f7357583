import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startGitHttpServer, type GitHttpServer } from '@conveyor/testing';
import { AGENT_SETUP, agentWorkLog, branchLog, git, seedRemote } from './git-remote';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState, type Json } from './run-waits';

// The run's work lands on a branch of the environment's repository (docs/harnesses.md "Where the work lands"). The
// "remote" is a bare repository on this machine (file://, allowed by GIT_ALLOW_LOCAL_URLS for tests; the egress
// rules are unchanged); the environment's setup commands stand in for the agent: they commit one change and leave
// another uncommitted.
jest.setTimeout(120_000);

/**
 * The remotes live on this machine (a path, a loopback port), which a real sandbox cannot reach by design; the clone
 * runs unsandboxed here. The push under test happens on the orchestrator either way.
 */
const LOCAL_REMOTE_SANDBOX = { RUN_SANDBOX: 'none', RUN_SANDBOX_NONE_ACKNOWLEDGED: 'runs-are-not-isolated' };

/** An environment cloning `url`, whose setup (standing in for the agent) commits one change and leaves an untracked file. */
async function environmentWith(
  platform: RunningPlatform,
  url: string,
  pushSecretName: string,
): Promise<string> {
  const created = await apiCall(platform, 'POST', '/agent/environments', {
    name: `push with ${pushSecretName}`,
    repositories: [{ url, push_secret_name: pushSecretName }],
    setup_commands: [AGENT_SETUP],
  });
  expect(created.status).toBe(201);
  expect(created.body.config).toMatchObject({ repositories: [{ url, push_secret_name: pushSecretName }] });
  return created.body.uid as string;
}

async function finishedRunIn(
  platform: RunningPlatform,
  environmentId: string,
): Promise<{ runId: string; done: Json }> {
  const created = await apiCall(platform, 'POST', '/agent/runs', {
    prompt: '@demo message done',
    config: { environment_id: environmentId },
  });
  expect(created.status).toBe(200);
  const runId = created.body.run_id as string;
  return { runId, done: await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000) };
}

describe('pushing a run to its branch', () => {
  let platform: RunningPlatform;
  let root: string;
  let remote: string;
  let http: GitHttpServer;
  const pushToken = `push-token-${randomUUID()}`;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'run-branch-'));
    remote = seedRemote(root);
    http = await startGitHttpServer(root, 'pusher:unused');
    // Plain http is an allowed transport here, but loopback addresses are not (EGRESS_ALLOWED_ADDRESSES is empty).
    platform = await startPlatform({
      env: { ...LOCAL_REMOTE_SANDBOX, GIT_ALLOW_LOCAL_URLS: 'true', GIT_ALLOWED_SCHEMES: 'https,http' },
    });
    expect((await apiCall(platform, 'PUT', '/secrets/GIT_PUSH_TOKEN', { value: pushToken })).status).toBe(
      200,
    );
  });
  afterAll(async () => {
    await platform?.stop();
    await http?.close();
    await rm(root, { recursive: true, force: true });
  });

  const environmentWithRemote = (pushSecretName: string) =>
    environmentWith(platform, `file://${remote}`, pushSecretName);
  const runIn = async (environmentId: string) => finishedRunIn(platform, environmentId);

  it('pushes the commits and the uncommitted changes to conveyor/run-<id> and reports the branch', async () => {
    const { runId, done } = await runIn(await environmentWithRemote('GIT_PUSH_TOKEN'));
    expect(done.state).toBe('SUCCEEDED');

    const branch = `conveyor/run-${runId}`;
    const gitDir = ['--git-dir', remote];
    // The agent's commit, then the platform's commit of what it left uncommitted, on top of the remote's main.
    expect(git([...gitDir, 'log', '--format=%s', branch]).split('\n')).toEqual([
      `conveyor: run ${runId}`,
      'agent: rename world',
      'initial',
    ]);
    expect(git([...gitDir, 'show', `${branch}:hello.txt`])).toBe('hello conveyor');
    expect(git([...gitDir, 'show', `${branch}:notes.txt`])).toBe('left uncommitted');
    expect(git([...gitDir, 'log', '--format=%s', 'main'])).toBe('initial');

    const artifacts = done.artifacts as Json[];
    const reference = artifacts.find((a) => a.artifact_type === 'EXTERNAL_REFERENCE');
    expect(reference?.data).toMatchObject({
      reference_type: 'git_branch',
      title: branch,
      metadata: { branch, commit: git([...gitDir, 'rev-parse', branch]) },
    });
    expect(artifacts.some((a) => a.artifact_type === 'FILE')).toBe(true);
    // The push credential stays on the orchestrator: not in any log line of the platform.
    expect(platform.logs()).not.toContain(pushToken);
  });

  it('a missing push secret fails the run clearly and keeps the patch artifact', async () => {
    const { runId, done } = await runIn(await environmentWithRemote('NO_SUCH_SECRET'));
    expect(done).toMatchObject({
      state: 'FAILED',
      status_message: { message: expect.stringContaining('Team secret "NO_SUCH_SECRET"') },
    });
    expect(JSON.stringify(done.status_message)).toContain("The agent's work was not pushed");
    expect(JSON.stringify(done)).toContain('integration_not_configured');
    const patch = (done.artifacts as Json[]).find((a) => a.artifact_type === 'FILE');
    expect(patch?.data).toMatchObject({ filepath: `conveyor-run-${runId}-1.patch` });
    expect(git(['--git-dir', remote, 'branch', '--list', `conveyor/run-${runId}`])).toBe('');
  });

  it('the push obeys the git egress rules: a remote on a loopback address is refused (the sandbox could clone it)', async () => {
    const { runId, done } = await runIn(
      await environmentWith(platform, `${http.url}/origin.git`, 'GIT_PUSH_TOKEN'),
    );
    expect(done).toMatchObject({
      state: 'FAILED',
      status_message: { message: expect.stringContaining("The agent's work was not pushed") },
    });
    expect(JSON.stringify(done.status_message)).toMatch(/loopback|not permitted|EGRESS_ALLOWED_ADDRESSES/i);
    expect(http.requests.some((r) => r.service === 'git-receive-pack')).toBe(false);
    expect(git(['--git-dir', remote, 'branch', '--list', `conveyor/run-${runId}`])).toBe('');
  });

  it('the gateway refuses a push_secret_name that is not a secret name', async () => {
    const res = await apiCall(platform, 'POST', '/agent/environments', {
      name: 'bad',
      repositories: [{ url: `file://${remote}`, push_secret_name: 'no spaces allowed' }],
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('push_secret_name');
  });
});

describe('pushing a run to its branch over HTTP with the team credential', () => {
  let platform: RunningPlatform;
  let root: string;
  let remote: string;
  let http: GitHttpServer;
  const credential = `pusher:${randomUUID()}`;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'run-branch-http-'));
    remote = seedRemote(root);
    http = await startGitHttpServer(root, credential);
    platform = await startPlatform({
      env: {
        ...LOCAL_REMOTE_SANDBOX,
        GIT_ALLOWED_SCHEMES: 'https,http',
        EGRESS_ALLOWED_ADDRESSES: new URL(http.url).host,
      },
    });
    expect((await apiCall(platform, 'PUT', '/secrets/FORGE_PUSH', { value: credential })).status).toBe(200);
    expect((await apiCall(platform, 'PUT', '/secrets/WRONG_PUSH', { value: 'pusher:wrong' })).status).toBe(
      200,
    );
  });
  afterAll(async () => {
    await platform?.stop();
    await http?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('the remote receives the push with the credential; the sandbox cloned without it; nothing logs it', async () => {
    const { runId, done } = await finishedRunIn(
      platform,
      await environmentWith(platform, `${http.url}/origin.git`, 'FORGE_PUSH'),
    );
    expect(done.state).toBe('SUCCEEDED');
    const branch = `conveyor/run-${runId}`;
    expect(branchLog(remote, branch)).toEqual(agentWorkLog(runId));
    const pushes = http.requests.filter((r) => r.method === 'POST' && r.service === 'git-receive-pack');
    expect(pushes.length).toBeGreaterThan(0);
    for (const push of pushes) expect(push.credential).toBe(credential);
    // The clone inside the sandbox (upload-pack) carried no credential: the agent's side never had one.
    const clones = http.requests.filter((r) => r.service === 'git-upload-pack');
    expect(clones.length).toBeGreaterThan(0);
    expect(clones.some((r) => r.credential === '')).toBe(true);
    const reference = (done.artifacts as Json[]).find((a) => a.artifact_type === 'EXTERNAL_REFERENCE');
    expect(reference?.data).toMatchObject({
      reference_type: 'git_branch',
      url: `${http.url}/origin/tree/${branch}`,
    });
    expect(platform.logs()).not.toContain(credential.split(':')[1]);
  });

  it('a credential the remote refuses fails the run with external_authentication_required', async () => {
    const { runId, done } = await finishedRunIn(
      platform,
      await environmentWith(platform, `${http.url}/origin.git`, 'WRONG_PUSH'),
    );
    expect(done).toMatchObject({
      state: 'FAILED',
      status_message: { message: expect.stringContaining("The agent's work was not pushed") },
    });
    expect(JSON.stringify(done)).toContain('external_authentication_required');
    expect(git(['--git-dir', remote, 'branch', '--list', `conveyor/run-${runId}`])).toBe('');
  });
});
