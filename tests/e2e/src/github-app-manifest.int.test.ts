import { createHash, randomUUID } from 'node:crypto';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createMember, otherTeamAdmin, startScriptedGitHub, type ScriptedGitHub } from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, eventually, type Json } from './run-waits';
import { webhookApi } from './webhook-helpers';

// Creating a team's GitHub App through GitHub's manifest flow (docs/integrations.md "GitHub App"), against a scripted
// GitHub whose /settings/apps/new sends the browser back with a code and whose POST /app-manifests/{code}/conversions
// issues a fresh RSA key and webhook secret once per code: the App is registered exactly as a pasted one (its key
// checked with GET /app), and a delivery signed with GitHub's secret starts a run. A replayed, expired or another
// team's state and a code GitHub refuses register nothing.
jest.setTimeout(180_000);

const INSTALLATION = 888;
const INVALID_STATE = 'state is unknown, expired or already used: start creating the GitHub App again';

describe('GitHub App manifest flow', () => {
  let platform: RunningPlatform;
  let github: ScriptedGitHub;
  let db: PrismaClient;
  let factoryId: string;
  let environmentId: string;
  let other: Awaited<ReturnType<typeof otherTeamAdmin>>;

  beforeAll(async () => {
    github = await startScriptedGitHub({
      token: `ghp_${randomUUID().replace(/-/g, '')}`,
      branchExists: () => false,
      manifestInstallations: [INSTALLATION],
    });
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'none',
        EGRESS_ALLOWED_ADDRESSES: new URL(github.url).host,
        GITHUB_API_URL: github.url,
        GITHUB_WEB_URL: github.url,
      },
    });
    db = createPrismaClient(platform.databaseUrl);
    factoryId = await webhookApi(platform).factory();
    const environment = await apiCall(platform, 'POST', '/agent/environments', {
      name: `manifest ${randomUUID()}`,
    });
    expect(environment.status).toBe(201);
    environmentId = environment.body.uid as string;
    other = await otherTeamAdmin(platform);
  });
  afterAll(async () => {
    await db?.$disconnect();
    await platform?.stop();
    await github?.close();
  });

  const start = (name: string, extra: Json = {}, key?: string) =>
    apiCall(
      platform,
      'POST',
      '/integrations/github-apps/manifest',
      { name, factory_id: factoryId, environment_id: environmentId, allowed_users: ['octocat'], ...extra },
      key,
    );
  /** The browser posts the manifest form to GitHub, the user confirms, GitHub sends it back: the callback URL. */
  const confirmOnGitHub = async (started: Json): Promise<URL> => {
    const res = await fetch(started.post_url as string, {
      method: 'POST',
      body: new URLSearchParams({ manifest: JSON.stringify(started.manifest) }),
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  };
  const comeBack = async (callback: URL, key?: string) => {
    const res = await fetch(callback, {
      redirect: 'manual',
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    const problem = res.headers.get('content-type')?.includes('json');
    return {
      status: res.status,
      location: res.headers.get('location') ?? '',
      body: problem ? ((await res.json()) as Json) : {},
    };
  };
  const apps = async (key?: string) =>
    (
      (await apiCall(platform, 'GET', '/integrations/github-apps', undefined, key)).body.github_apps as Json[]
    ).map((a) => a.name);
  const conversions = () => github.requests.filter((r) => r.path.startsWith('/app-manifests/')).length;
  const refusedAsInvalidState = (answer: { status: number; body: Json }) =>
    expect(answer).toMatchObject({ status: 400, body: { detail: INVALID_STATE } });

  it('creates the App on GitHub, registers it with the key GitHub issued, and its signed delivery starts a run', async () => {
    const started = await start('made-on-github', { trigger_label: 'agent' });
    expect(started.status).toBe(201);
    const { post_url, manifest, state, webhook_url } = started.body as {
      post_url: string;
      manifest: Json;
      state: string;
      webhook_url: string;
    };
    expect(post_url).toBe(`${github.url}/settings/apps/new?state=${state}`);
    expect(manifest).toMatchObject({
      name: 'made-on-github',
      hook_attributes: { url: webhook_url },
      redirect_url: expect.stringMatching(/\/v1\/integrations\/github-apps\/manifest\/callback$/),
      public: false,
      default_events: expect.arrayContaining(['issues', 'issue_comment', 'pull_request_review_comment']),
    });
    // Only the state's hash is kept.
    expect(await db.gitHubAppManifest.count({ where: { stateHash: state } })).toBe(0);

    const callback = await confirmOnGitHub(started.body);
    const back = await comeBack(callback);
    expect(back.status).toBe(302);
    const id = /\/console\/integrations\?github_app=(gha_[A-Za-z0-9]+)$/.exec(back.location)?.[1];
    expect(id).toBeDefined();
    const issued = github.manifestApps.at(-1)!;
    const app = (await apiCall(platform, 'GET', `/integrations/github-apps/${id}`)).body;
    expect(app).toMatchObject({
      name: 'made-on-github',
      app_id: issued.id,
      bot_login: 'made-on-github[bot]',
      webhook_url,
      trigger_label: 'agent',
      allowed_users: ['octocat'],
      status: 'active',
    });
    // The code was exchanged without credentials, then the key checked as a pasted one is: GET /app signed with it.
    const exchange = github.requests.find((r) => r.path.startsWith('/app-manifests/'));
    expect(exchange?.authorization).toBe('');
    expect(github.requests.some((r) => r.path === '/app')).toBe(true);

    const body = JSON.stringify({
      action: 'assigned',
      issue: { number: 3, title: 'Do it', body: 'Please.', html_url: 'https://github.test/i/3' },
      assignee: { login: 'made-on-github[bot]' },
      sender: { login: 'octocat' },
      repository: { full_name: 'acme/gadgets', clone_url: `${github.url}/acme/gadgets.git` },
      installation: { id: INSTALLATION },
    });
    const delivery = await fetch(webhook_url, {
      method: 'POST',
      body,
      headers: {
        ...signWebhook('github', { secret: issued.webhookSecret, body, now: new Date() }),
        'x-github-delivery': randomUUID(),
        'x-github-event': 'issues',
      },
    });
    expect(delivery.status).toBe(202);
    const deliveries = () => webhookApi(platform).deliveries(factoryId, app.webhook_uid as string);
    let runId = '';
    await eventually(
      async () => !!(runId = (await deliveries()).flatMap((d) => d.run_ids as string[])[0] ?? ''),
      'the run',
      platform,
      30_000,
    );
    const run = await apiCall(platform, 'GET', `/agent/runs/${runId}`);
    expect(run.body.metadata).toMatchObject({ github_app_id: id, github_number: '3' });

    // Coming back a second time with the same state registers nothing more and asks GitHub nothing.
    const asked = conversions();
    refusedAsInvalidState(await comeBack(callback));
    expect(conversions()).toBe(asked);
    expect(github.manifestApps).toHaveLength(1);
  });

  it('answers the registered App as JSON to a client that asks for JSON', async () => {
    const started = await start('as-json');
    const res = await fetch(await confirmOnGitHub(started.body), {
      redirect: 'manual',
      headers: { accept: 'application/json' },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      name: 'as-json',
      app_id: github.manifestApps.at(-1)!.id,
      webhook_url: started.body.webhook_url,
    });
  });

  it('refuses an expired state in the same words and stores nothing', async () => {
    const started = await start('expired');
    const state = started.body.state as string;
    const hash = createHash('sha256').update(state).digest('hex');
    await db.gitHubAppManifest.updateMany({
      where: { stateHash: hash },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const asked = conversions();
    refusedAsInvalidState(await comeBack(await confirmOnGitHub(started.body)));
    expect(conversions()).toBe(asked);
    expect(await apps()).not.toContain('expired');
  });

  it("refuses another team's state to a key of this team, and registers nothing in either team", async () => {
    const otherFactory = await apiCall(platform, 'POST', '/factories', { name: 'theirs' }, other.key);
    const theirs = await apiCall(
      platform,
      'POST',
      '/integrations/github-apps/manifest',
      { name: 'theirs', factory_id: otherFactory.body.factory_id },
      other.key,
    );
    expect(theirs.status).toBe(201);
    const asked = conversions();
    refusedAsInvalidState(await comeBack(await confirmOnGitHub(theirs.body), platform.apiKey));
    expect(conversions()).toBe(asked);
    expect(await apps()).not.toContain('theirs');
    expect(await apps(other.key)).toEqual([]);
  });

  it("answers a code GitHub refuses with GitHub's reason, stores nothing, and the state is used up", async () => {
    const started = await start('wrong-code');
    const callback = await confirmOnGitHub(started.body);
    const wrong = new URL(callback);
    wrong.searchParams.set('code', 'deadbeefdeadbeef');
    const refused = await comeBack(wrong);
    expect(refused).toMatchObject({
      status: 400,
      body: { detail: 'GitHub refused the manifest code: Not Found' },
    });
    expect(await apps()).not.toContain('wrong-code');
    refusedAsInvalidState(await comeBack(callback));
    expect(await apps()).not.toContain('wrong-code');
  });

  it('registers nothing for a starter whose key was revoked meanwhile, or who is no longer an admin', async () => {
    const revoked = await createMember(platform, { role: 'ADMIN' });
    const demoted = await createMember(platform, { role: 'ADMIN' });
    const byRevoked = await start('revoked-key', { environment_id: undefined }, revoked.key);
    const byDemoted = await start('demoted', { environment_id: undefined }, demoted.key);
    expect([byRevoked.status, byDemoted.status]).toEqual([201, 201]);
    await db.apiKey.updateMany({ where: { userId: revoked.userId }, data: { revokedAt: new Date() } });
    await db.user.update({ where: { id: demoted.userId }, data: { role: 'MEMBER' } });
    const asked = conversions();
    refusedAsInvalidState(await comeBack(await confirmOnGitHub(byRevoked.body)));
    expect((await comeBack(await confirmOnGitHub(byDemoted.body))).status).toBe(403);
    // Neither reached GitHub's conversion: the key is not fetched for a registration that cannot happen.
    expect(conversions()).toBe(asked);
    expect(await apps()).not.toContain('revoked-key');
    expect(await apps()).not.toContain('demoted');
  });

  it('refuses to start for a member, for a name already registered and for a factory of another team', async () => {
    const member = await createMember(platform);
    expect((await start('by-member', {}, member.key)).status).toBe(403);
    expect((await start('made-on-github')).status).toBe(409);
    // Another team's factory is as missing as an unknown one.
    expect((await start('elsewhere', {}, other.key)).status).toBe(404);
  });
});
