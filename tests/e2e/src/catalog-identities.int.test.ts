import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OzAPI from 'oz-agent-sdk';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { createMember, createTeam } from '@conveyor/testing';
import { runCli, startPlatform, type RunningPlatform } from './platform';

// Environments, skills, models and agent identities through the real gateway over HTTP and the official SDK.
// Skills come from real git repositories: bare repositories created here, served to the platform as file:// URLs
// (GIT_BASE_URL points `github_repos` at them; GIT_ALLOW_LOCAL_URLS lets environments name them).

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODELS = {
  default_model_id: 'model-small',
  models: [
    {
      id: 'model-small',
      provider: 'acme-ai',
      display_name: 'Small',
      cost: { input_usd_per_million_tokens: 0.5, output_usd_per_million_tokens: 1.5 },
    },
    {
      id: 'model-large',
      provider: 'acme-ai',
      cost: { input_usd_per_million_tokens: 5, output_usd_per_million_tokens: 15 },
    },
    { id: 'model-retired', provider: 'old-ai', disabled: true, disabled_reason: 'Retired on 2026-01-01' },
  ],
};

const git = (cwd: string, ...args: string[]) =>
  execFileSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args],
    { cwd, stdio: 'pipe' },
  ).toString();

/** A bare repository `<root>/<owner>/<repo>.git` and a working clone to push commits from. */
function createRepository(root: string, owner: string, repo: string) {
  const bare = path.join(root, owner, `${repo}.git`);
  mkdirSync(bare, { recursive: true });
  git(bare, 'init', '--bare', '--quiet');
  const work = path.join(root, 'work', owner, repo);
  mkdirSync(work, { recursive: true });
  git(work, 'init', '--quiet');
  git(work, 'remote', 'add', 'origin', bare);
  return {
    url: `file://${bare}`,
    commit(files: Record<string, string>, message = 'update') {
      for (const [file, content] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
        writeFileSync(path.join(work, file), content);
      }
      git(work, 'add', '-A');
      git(work, 'commit', '--quiet', '-m', message);
      git(work, 'push', '--quiet', 'origin', 'HEAD:main');
      git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    },
  };
}

const skill = (name: string | undefined, description: string, body: string) =>
  `---\n${name ? `name: ${name}\n` : ''}description: ${description}\n---\n${body}\n`;

describe('catalog and identities end to end', () => {
  let platform: RunningPlatform;
  let db: PrismaClient;
  let client: OzAPI;
  let gitRoot: string;
  let apiRepo: ReturnType<typeof createRepository>;
  let otherKey: string;
  let otherUserId: string;
  let memberKey: string;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    gitRoot = mkdtempSync(path.join(os.tmpdir(), 'conveyor-git-'));
    apiRepo = createRepository(gitRoot, 'acme', 'api');
    apiRepo.commit({
      '.claude/skills/deploy/SKILL.md': skill(
        'deploy',
        'Deploys the API',
        'Deploy the API carefully.\n@demo message Deploy skill engaged',
      ),
      '.claude/skills/broken/SKILL.md': '---\nname: [unclosed\ndescription: nope\n---\nbody',
      'docs/audit/SKILL.md': skill(undefined, 'Audits dependencies', 'Audit every dependency.'),
      'README.md': '# api',
    });
    createRepository(gitRoot, 'acme', 'web').commit({
      'skills/deploy/SKILL.md': skill('deploy', 'Deploys the web app', 'Deploy the web app.'),
    });
    createRepository(gitRoot, 'other', 'secret').commit({
      'SKILL.md': skill('hidden', 'Not for team_dev', 'secret'),
    });

    platform = await startPlatform({
      env: {
        GIT_BASE_URL: `file://${gitRoot}`,
        GIT_ALLOW_LOCAL_URLS: 'true',
        MODELS_CONFIG: JSON.stringify(MODELS),
        SKILL_CACHE_TTL_MS: '600000',
      },
    });
    db = createPrismaClient(platform.databaseUrl);
    client = new OzAPI({ apiKey: platform.apiKey, baseURL: platform.apiUrl, maxRetries: 0 });
    const otherTeam = await createTeam(platform);
    ({ userId: otherUserId, key: otherKey } = await createMember(platform, {
      teamId: otherTeam,
      role: 'ADMIN',
      email: 'other@other.dev',
    }));
    memberKey = (await createMember(platform, { email: 'member@dev.dev' })).key;
  }, 120_000);

  afterAll(async () => {
    await db?.$disconnect();
    await platform?.stop();
    if (gitRoot) rmSync(gitRoot, { recursive: true, force: true });
  });

  const call = async (method: string, urlPath: string, body?: unknown, key: string = platform.apiKey) => {
    const res = await fetch(`${platform.apiUrl}${urlPath}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };

  async function waitForState(runId: string, states: string[], timeoutMs = 30_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    let last: Json = {};
    while (Date.now() < deadline) {
      last = (await call('GET', `/agent/runs/${runId}`)).body;
      if (states.includes(last.state as string)) return last;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`run ${runId} stayed ${String(last.state)}\n${platform.logs().slice(-4000)}`);
  }

  const expectNotFound = (res: { status: number; body: Json }) => {
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: 404, type: expect.stringMatching(/resource_not_found$/) });
  };

  describe('models', () => {
    it('lists the configured catalog with the default and disabled models', async () => {
      const res = await call('GET', '/agent/models');
      expect(res.status).toBe(200);
      expect(res.body.default_model_id).toBe('model-small');
      expect(res.body.models).toEqual([
        {
          id: 'model-small',
          provider: 'acme-ai',
          display_name: 'Small',
          cost: { input_usd_per_million_tokens: 0.5, output_usd_per_million_tokens: 1.5 },
          is_default: true,
          disabled: false,
          disabled_reason: null,
        },
        expect.objectContaining({
          id: 'model-large',
          display_name: 'model-large',
          is_default: false,
          disabled: false,
        }),
        expect.objectContaining({
          id: 'model-retired',
          provider: 'old-ai',
          disabled: true,
          disabled_reason: 'Retired on 2026-01-01',
        }),
      ]);
    });

    it('fills the default model, accepts an enabled one and rejects unknown or disabled models', async () => {
      const plain = await client.agent.run({ prompt: 'no model named' });
      expect((await client.agent.runs.retrieve(plain.run_id)).agent_config?.model_id).toBe('model-small');
      const large = await call('POST', '/agent/runs', {
        prompt: 'large',
        config: { model_id: 'model-large' },
      });
      expect(
        (await call('GET', `/agent/runs/${large.body.run_id as string}`)).body.agent_config.model_id,
      ).toBe('model-large');
      const retired = await call('POST', '/agent/runs', {
        prompt: 'x',
        config: { model_id: 'model-retired' },
      });
      expect(retired.status).toBe(400);
      expect(retired.body.detail).toMatch(/model-retired.*disabled: Retired on 2026-01-01/);
      const unknown = await call('POST', '/agent/runs', { prompt: 'x', config: { model_id: 'gpt-17' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.detail).toMatch(/Unknown model "gpt-17"/);
      await expect(
        client.agent.run({ prompt: 'x', config: { model_id: 'model-retired' } }),
      ).rejects.toBeInstanceOf(OzAPI.BadRequestError);
    });
  });

  describe('environments', () => {
    it('creates environments with 22-character IDs from github_repos and git URLs, and validates the body', async () => {
      const api = await call('POST', '/agent/environments', {
        name: 'API env',
        description: 'the api',
        docker_image: 'node:20',
        github_repos: [{ owner: 'acme', repo: 'api' }],
        setup_commands: ['echo ready > setup.txt'],
        failure_session_retention_minutes: 15,
      });
      expect(api.status).toBe(201);
      expect(api.body.uid).toMatch(/^[A-Za-z0-9]{22}$/);
      expect(api.body).toMatchObject({
        config: {
          name: 'API env',
          description: 'the api',
          docker_image: 'node:20',
          github_repos: [{ owner: 'acme', repo: 'api' }],
          repositories: [{ url: `file://${gitRoot}/acme/api.git` }],
          setup_commands: ['echo ready > setup.txt'],
          failure_session_retention_minutes: 15,
        },
        setup_failed: false,
        scope: { type: 'Team', uid: 'team_dev' },
        creator: { uid: 'user_dev', type: 'user' },
        access: 'owner',
      });
      env.api = api.body.uid as string;
      const web = await call('POST', '/agent/environments', {
        name: 'Web env',
        repositories: [{ url: `file://${gitRoot}/acme/web.git` }],
      });
      expect(web.status).toBe(201);
      env.web = web.body.uid as string;

      for (const body of [
        {},
        { name: '' },
        { name: 'x', github_repos: [{ owner: 'a b', repo: 'c' }] },
        { name: 'x', repositories: [{ url: 'ext::sh -c touch% /tmp/pwned' }] },
        { name: 'x', repositories: [{ url: '--upload-pack=evil' }] },
        { name: 'x', failure_session_retention_minutes: 99 },
        { name: 'x', unknown_field: true },
      ]) {
        const res = await call('POST', '/agent/environments', body);
        expect(res.status).toBe(400);
        expect(res.body.type).toMatch(/invalid_request$/);
      }
    });

    it('lists newest-updated first by default, by name on request, through the SDK transport as well', async () => {
      const byUpdate = await call('GET', '/agent/environments');
      expect(byUpdate.body.environments.map((e: Json) => e.uid)).toEqual([env.web, env.api]);
      const renamed = await call('PUT', `/agent/environments/${env.api}`, {
        name: 'Alpha API env',
        description: null,
        setup_commands: ['echo ready > setup.txt'],
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body.config).toMatchObject({
        name: 'Alpha API env',
        description: null,
        github_repos: [{ owner: 'acme', repo: 'api' }],
      });
      expect(renamed.body.last_editor).toMatchObject({ uid: 'user_dev' });
      expect(
        (await call('GET', '/agent/environments?sort_by=last_updated')).body.environments.map(
          (e: Json) => e.uid,
        ),
      ).toEqual([env.api, env.web]);
      expect(
        (await call('GET', '/agent/environments?sort_by=name')).body.environments.map(
          (e: Json) => e.config.name,
        ),
      ).toEqual(['Alpha API env', 'Web env']);
      expect((await call('GET', '/agent/environments?sort_by=size')).status).toBe(400);
      // The published SDK (1.0.0-alpha.8) has no listEnvironments method yet; its transport reaches the same endpoint.
      const viaSdk = await client.get<{ environments: Json[] }>('/agent/environments', {
        query: { sort_by: 'name' },
      });
      expect(viaSdk.environments.map((e) => e.uid)).toEqual([env.api, env.web]);
    });

    it('answers 404 alike for missing, malformed and other teams’ environments', async () => {
      expect((await call('GET', `/agent/environments/${env.api}`)).body.uid).toBe(env.api);
      const missing = await call('GET', '/agent/environments/ZZZZZZZZZZZZZZZZZZZZZZ');
      expectNotFound(missing);
      expectNotFound(await call('GET', '/agent/environments/not-an-id'));
      const foreign = await call('GET', `/agent/environments/${env.api}`, undefined, otherKey);
      expectNotFound(foreign);
      expect(foreign.body.detail).toBe(missing.body.detail);
      expectNotFound(await call('PUT', `/agent/environments/${env.api}`, { name: 'mine now' }, otherKey));
      expectNotFound(await call('DELETE', `/agent/environments/${env.api}`, undefined, otherKey));
      expect((await call('GET', '/agent/environments', undefined, otherKey)).body.environments).toEqual([]);
    });

    it('lets only managers change a team environment, and keeps personal environments personal', async () => {
      const denied = await call('PUT', `/agent/environments/${env.web}`, { name: 'by member' }, memberKey);
      expect(denied.status).toBe(403);
      expect(denied.body.type).toMatch(/not_authorized$/);
      expect((await call('GET', '/agent/environments', undefined, memberKey)).body.environments).toHaveLength(
        2,
      );
      const personal = await call('POST', '/agent/environments', { name: 'Scratch', team: false });
      expect(personal.body.scope).toEqual({ type: 'User', uid: 'user_dev' });
      expectNotFound(
        await call('GET', `/agent/environments/${personal.body.uid as string}`, undefined, memberKey),
      );
      expect((await call('DELETE', `/agent/environments/${personal.body.uid as string}`)).status).toBe(204);
      expectNotFound(await call('GET', `/agent/environments/${personal.body.uid as string}`));
    });

    it('invites a guest by e-mail; access starts when the guest accepts and ends when a manager removes it', async () => {
      const invited = await call('POST', `/agent/environments/${env.web}/guests`, {
        email: 'Other@Other.dev',
      });
      expect(invited.status).toBe(202);
      expect(invited.body).toMatchObject({
        environment_id: env.web,
        email: 'other@other.dev',
        status: 'pending',
      });
      expect(
        (await call('POST', `/agent/environments/${env.web}/guests`, { email: 'other@other.dev' })).body
          .invitation_id,
      ).toBe(invited.body.invitation_id);
      expect(
        (await call('POST', `/agent/environments/${env.web}/guests`, { email: 'not an address' })).status,
      ).toBe(400);
      expect(
        (await call('POST', `/agent/environments/${env.web}/guests`, { email: 'x@y.dev' }, memberKey)).status,
      ).toBe(403);
      expect((await call('GET', '/agent/environments', undefined, otherKey)).body.environments).toEqual([]);
      const listed = await call('GET', `/agent/environments/${env.web}/guests`);
      expect(listed.body).toMatchObject({
        guests: [],
        invitations: [
          expect.objectContaining({ invitation_id: invited.body.invitation_id, email: 'other@other.dev' }),
        ],
      });

      // Declining removes it; a new invitation is accepted.
      expect(
        (
          await call(
            'DELETE',
            `/agent/environment-invitations/${invited.body.invitation_id as string}`,
            undefined,
            otherKey,
          )
        ).status,
      ).toBe(204);
      expect(
        (await call('GET', '/agent/environment-invitations', undefined, otherKey)).body.invitations,
      ).toEqual([]);
      const again = await call('POST', `/agent/environments/${env.web}/guests`, { email: 'other@other.dev' });
      expectNotFound(
        await call(
          'POST',
          `/agent/environment-invitations/${again.body.invitation_id as string}/accept`,
          undefined,
          memberKey,
        ),
      );
      const accepted = await call(
        'POST',
        `/agent/environment-invitations/${again.body.invitation_id as string}/accept`,
        undefined,
        otherKey,
      );
      expect(accepted.body).toMatchObject({ uid: env.web, access: 'guest' });
      expect((await call('GET', `/agent/environments/${env.web}/guests`)).body).toEqual({
        guests: [expect.objectContaining({ user_id: otherUserId, email: 'other@other.dev' })],
        invitations: [],
      });
      const seen = await call('GET', '/agent/environments', undefined, otherKey);
      expect(seen.body.environments).toEqual([expect.objectContaining({ uid: env.web, access: 'guest' })]);
      expect(
        (await call('PUT', `/agent/environments/${env.web}`, { name: 'guest edit' }, otherKey)).status,
      ).toBe(403);
      expect((await call('DELETE', `/agent/environments/${env.web}/guests/${otherUserId}`)).status).toBe(204);
      expectNotFound(await call('DELETE', `/agent/environments/${env.web}/guests/${otherUserId}`));
      expectNotFound(await call('GET', `/agent/environments/${env.web}`, undefined, otherKey));

      // A manager withdraws a pending invitation.
      const withdrawn = await call('POST', `/agent/environments/${env.web}/guests`, {
        email: 'someone@else.dev',
      });
      expectNotFound(
        await call(
          'DELETE',
          `/agent/environment-invitations/${withdrawn.body.invitation_id as string}`,
          undefined,
          otherKey,
        ),
      );
      expect(
        (await call('DELETE', `/agent/environment-invitations/${withdrawn.body.invitation_id as string}`))
          .status,
      ).toBe(204);
      expect((await call('GET', `/agent/environments/${env.web}/guests`)).body.invitations).toEqual([]);
    });

    it('shares by link: redeeming records access, disabling the link revokes it', async () => {
      const link = await call('POST', `/agent/environments/${env.api}/share-link`);
      expect(link.status).toBe(200);
      expect(link.body.url).toMatch(new RegExp(`/v1/agent/environment-links/${link.body.token as string}$`));
      expect((await call('POST', `/agent/environments/${env.api}/share-link`)).body.token).toBe(
        link.body.token,
      );
      expect(
        (await call('POST', `/agent/environments/${env.api}/share-link`, undefined, memberKey)).status,
      ).toBe(403);
      const redeemed = await call(
        'POST',
        `/agent/environment-links/${link.body.token as string}`,
        undefined,
        otherKey,
      );
      expect(redeemed.status).toBe(200);
      expect(redeemed.body).toMatchObject({ uid: env.api, access: 'link' });
      expect(
        (await call('GET', '/agent/environments', undefined, otherKey)).body.environments.map(
          (e: Json) => e.uid,
        ),
      ).toEqual([env.api]);
      expect((await call('GET', `/agent/environments/${env.api}`)).body.link_sharing_enabled).toBe(true);
      expect((await call('DELETE', `/agent/environments/${env.api}/share-link`)).status).toBe(204);
      expect((await call('GET', '/agent/environments', undefined, otherKey)).body.environments).toEqual([]);
      expectNotFound(
        await call('POST', `/agent/environment-links/${link.body.token as string}`, undefined, otherKey),
      );
    });
  });

  describe('skills', () => {
    it('discovers SKILL.md files of the environments’ repositories, grouped by name (SDK agent.list)', async () => {
      const listed = await client.agent.list();
      expect(listed.agents.map((a) => a.name)).toEqual(['audit', 'deploy']);
      const deploy = listed.agents.find((a) => a.name === 'deploy')!;
      expect(deploy.variants.map((v) => v.id)).toEqual([
        'acme/api:.claude/skills/deploy/SKILL.md',
        'acme/web:skills/deploy/SKILL.md',
      ]);
      expect(deploy.variants[0]).toEqual({
        id: 'acme/api:.claude/skills/deploy/SKILL.md',
        base_prompt: 'Deploy the API carefully.\n@demo message Deploy skill engaged',
        description: 'Deploys the API',
        environments: [{ uid: env.api, name: 'Alpha API env' }],
        source: { owner: 'acme', name: 'api', skill_path: '.claude/skills/deploy/SKILL.md' },
        last_run_timestamp: null,
      });
      const audit = listed.agents.find((a) => a.name === 'audit')!;
      expect(audit.variants[0]).toMatchObject({
        id: 'acme/api:docs/audit/SKILL.md',
        description: 'Audits dependencies',
        base_prompt: 'Audit every dependency.',
      });
      expect(JSON.stringify(listed)).not.toContain('error');
    });

    it('lists malformed skills with their parse error only on request, and narrows to one repository', async () => {
      const all = await call('GET', '/agent?include_malformed_skills=true');
      const broken = all.body.agents.find((a: Json) => a.name === 'broken');
      expect(broken.variants[0]).toMatchObject({
        id: 'acme/api:.claude/skills/broken/SKILL.md',
        error: expect.stringMatching(/invalid YAML/),
      });
      const web = await client.agent.list({ repo: 'acme/web' });
      expect(web.agents).toEqual([
        expect.objectContaining({
          name: 'deploy',
          variants: [expect.objectContaining({ id: 'acme/web:skills/deploy/SKILL.md' })],
        }),
      ]);
      expect((await call('GET', '/agent?repo=acme/nothing')).body.agents).toEqual([]);
      for (const query of ['repo=not-a-repo', 'sort_by=stars', 'refresh=maybe'])
        expect((await call('GET', `/agent?${query}`)).status).toBe(400);
      expect((await call('GET', '/agent', undefined, otherKey)).body.agents).toEqual([]);
    });

    it('serves the cache until refresh=true clears it', async () => {
      apiRepo.commit({ 'tools/lint/SKILL.md': skill('lint', 'Lints', 'Run the linter.') }, 'add lint');
      expect((await call('GET', '/agent')).body.agents.map((a: Json) => a.name)).not.toContain('lint');
      const refreshed = await client.agent.list({ refresh: true });
      expect(refreshed.agents.map((a) => a.name)).toEqual(['audit', 'deploy', 'lint']);
    });

    it('runs a skill: records the normalized spec, resolves its instructions into the harness, clones the environment', async () => {
      const created = await call('POST', '/agent/runs', {
        skill: 'acme/api:deploy',
        prompt: 'ship it',
        config: { environment_id: env.api },
      });
      expect(created.status).toBe(200);
      const done = await waitForState(created.body.run_id as string, ['SUCCEEDED', 'FAILED', 'ERROR']);
      expect(done.state).toBe('SUCCEEDED');
      expect(done.agent_config).toMatchObject({
        skill_spec: 'acme/api:.claude/skills/deploy/SKILL.md',
        name: 'deploy',
        environment_id: env.api,
        model_id: 'model-small',
      });
      const conversation = await call('GET', `/agent/runs/${created.body.run_id as string}/conversation`);
      expect(JSON.stringify(conversation.body)).toContain('Deploy skill engaged');
      const timeline = await call('GET', `/agent/runs/${created.body.run_id as string}/timeline`);
      // The environment reached the runner: its clone and setup command ran as a setup step.
      expect(JSON.stringify(timeline.body)).toMatch(
        /setup_commands[^}]*succeeded|succeeded[^}]*setup_commands/,
      );

      const audit = await call('POST', '/agent/runs', {
        config: { skill_spec: 'acme/api:docs/audit/SKILL.md' },
      });
      expect(audit.status).toBe(200);
      await waitForState(audit.body.run_id as string, ['SUCCEEDED']);
      const byLastRun = await client.agent.list({ sort_by: 'last_run' });
      expect(byLastRun.agents.map((a) => a.name)).toEqual(['audit', 'deploy', 'lint']);
      expect(byLastRun.agents[0]!.variants[0]!.last_run_timestamp).toBeTruthy();

      const malformed = await call('POST', '/agent/runs', { skill: 'acme/api:broken' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.detail).toMatch(/malformed/);
      const ambiguous = await call('POST', '/agent/runs', { skill: 'deploy', prompt: 'x' });
      expect(ambiguous.status).toBe(400);
      expect(ambiguous.body.detail).toMatch(/ambiguous/);
    });

    it('validates environment_id at run creation against what the caller can reach', async () => {
      const malformed = await call('POST', '/agent/runs', {
        prompt: 'x',
        config: { environment_id: 'env-1' },
      });
      expect(malformed.status).toBe(400);
      expectNotFound(
        await call('POST', '/agent/runs', {
          prompt: 'x',
          config: { environment_id: 'ZZZZZZZZZZZZZZZZZZZZZZ' },
        }),
      );
      const foreignEnv = await call('POST', '/agent/environments', { name: 'Other env' }, otherKey);
      expectNotFound(
        await call('POST', '/agent/runs', {
          prompt: 'x',
          config: { environment_id: foreignEnv.body.uid as string },
        }),
      );
    });
  });

  describe('agent identities', () => {
    const identityPath = (uid: string) => `/agent/identities/${uid}`;
    const ids: Record<string, string> = {};

    it('creates, lists with availability by plan limit, reads and updates identities (SDK transport)', async () => {
      await runCli(['team', 'set-identity-limit', '--team', 'team_dev', '--limit', '2'], platform.env);
      for (const name of ['Alpha', 'Bravo', 'Charlie']) {
        const created = await client.post<Json>('/agent/identities', {
          body: { name, description: `${name} bot`, skills: ['acme/api:docs/audit/SKILL.md'] },
        });
        ids[name] = created.uid as string;
        expect(created).toMatchObject({
          name,
          default_runner_uid: '',
          secrets: [],
          memory: { attached_stores: [], auto_memory: { enabled: true } },
        });
      }
      const listed = await client.get<{ agents: Json[] }>('/agent/identities');
      expect(listed.agents.map((a) => [a.name, a.available])).toEqual([
        ['Alpha', true],
        ['Bravo', true],
        ['Charlie', false],
      ]);
      const one = await client.get<Json>(identityPath(ids.Alpha!));
      expect(one).toMatchObject({
        uid: ids.Alpha,
        available: true,
        description: 'Alpha bot',
        skills: ['acme/api:docs/audit/SKILL.md'],
      });

      const updated = await client.put<Json>(identityPath(ids.Alpha!), {
        body: { description: null, skills: [], prompt: 'Be brief', base_model: 'model-large' },
      });
      expect(updated).toMatchObject({
        description: 'Alpha bot',
        skills: [],
        prompt: 'Be brief',
        base_model: 'model-large',
      });
      expect((await call('PUT', identityPath(ids.Alpha!), { name: '' })).status).toBe(400);
      expect((await call('PUT', identityPath(ids.Alpha!), { base_model: 'model-retired' })).status).toBe(400);
      expect((await call('POST', '/agent/identities', {})).status).toBe(400);
      expect(
        (await call('POST', '/agent/identities', { name: 'x', environment_id: 'ZZZZZZZZZZZZZZZZZZZZZZ' }))
          .status,
      ).toBe(404);
    });

    it('hides other teams’ identities and keeps writes for admins', async () => {
      expectNotFound(await call('GET', identityPath(ids.Alpha!), undefined, otherKey));
      expectNotFound(await call('PUT', identityPath(ids.Alpha!), { name: 'x' }, otherKey));
      expectNotFound(await call('DELETE', identityPath(ids.Alpha!), undefined, otherKey));
      expectNotFound(await call('GET', identityPath('agent_missing')));
      expect((await call('GET', '/agent/identities', undefined, otherKey)).body.agents).toEqual([]);
      expect((await call('GET', '/agent/identities', undefined, memberKey)).body.agents).toHaveLength(3);
      const denied = await call('POST', '/agent/identities', { name: 'by member' }, memberKey);
      expect(denied.status).toBe(403);
      expect(denied.body.type).toMatch(/not_authorized$/);
    });

    it('runs as the identity whose key created the run, and refuses unavailable identities', async () => {
      const key = await call('POST', `${identityPath(ids.Alpha!)}/api-keys`, { name: 'ci' });
      expect(key.status).toBe(201);
      expect(key.body).toMatchObject({
        name: 'ci',
        prefix: expect.stringMatching(/^cvy_/),
        key: expect.stringMatching(/^cvy_/),
      });
      const listed = await call('GET', `${identityPath(ids.Alpha!)}/api-keys`);
      expect(listed.body.api_keys).toEqual([
        expect.objectContaining({ id: key.body.id, prefix: key.body.prefix, revoked_at: null }),
      ]);
      expect(JSON.stringify(listed.body)).not.toContain(key.body.key as string);

      const asAgent = new OzAPI({ apiKey: key.body.key as string, baseURL: platform.apiUrl, maxRetries: 0 });
      const run = await asAgent.agent.run({ prompt: 'agent at work' });
      const details = await waitForState(run.run_id, ['SUCCEEDED']);
      expect(details.executor).toMatchObject({ uid: ids.Alpha, type: 'service_account' });
      expect(details.agent_config.model_id).toBe('model-large'); // the identity's base_model

      const named = await call('POST', '/agent/runs', { prompt: 'as bravo', agent_identity_uid: ids.Bravo });
      expect((await call('GET', `/agent/runs/${named.body.run_id as string}`)).body.executor).toMatchObject({
        uid: ids.Bravo,
      });
      const unavailable = await call('POST', '/agent/runs', {
        prompt: 'as charlie',
        agent_identity_uid: ids.Charlie,
      });
      expect(unavailable.status).toBe(403);
      expect(unavailable.body.type).toMatch(/feature_not_available$/);
      expectNotFound(await call('POST', '/agent/runs', { prompt: 'x', agent_identity_uid: 'agent_missing' }));
      const charlieKey = await call('POST', `${identityPath(ids.Charlie!)}/api-keys`, {});
      expect((await call('POST', '/agent/runs', { prompt: 'x' }, charlieKey.body.key as string)).status).toBe(
        403,
      );

      expect(
        (await call('DELETE', `${identityPath(ids.Alpha!)}/api-keys/${key.body.id as string}`)).status,
      ).toBe(204);
      expect((await call('GET', '/agent/runs', undefined, key.body.key as string)).status).toBe(401);
      expectNotFound(await call('DELETE', `${identityPath(ids.Bravo!)}/api-keys/${key.body.id as string}`));
    });

    it('deletes an identity with all its keys in one go; the next oldest becomes available', async () => {
      const key = await call('POST', `${identityPath(ids.Bravo!)}/api-keys`, { name: 'one' });
      await call('POST', `${identityPath(ids.Bravo!)}/api-keys`, { name: 'two' });
      expect((await call('GET', '/agent/identities', undefined, key.body.key as string)).status).toBe(200);
      const deleted = await client.delete(identityPath(ids.Bravo!));
      expect(deleted).toBeNull();
      expect(await db.apiKey.count({ where: { agentIdentityId: ids.Bravo! } })).toBe(0);
      expect((await call('GET', '/agent/identities', undefined, key.body.key as string)).status).toBe(401);
      expectNotFound(await call('GET', identityPath(ids.Bravo!)));
      const listed = (await call('GET', '/agent/identities')).body.agents as Json[];
      expect(listed.map((a) => [a.name, a.available])).toEqual([
        ['Alpha', true],
        ['Charlie', true],
      ]);
    });
  });
});
