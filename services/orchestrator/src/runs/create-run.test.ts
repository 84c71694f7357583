import type { AgentIdentity, Environment, Prisma } from '@conveyor/db';
import type { Caller__Output } from '@conveyor/proto';
import { BUILT_IN_MODEL_CATALOG, ModelCatalog } from '../catalog/model-catalog';
import type { SkillVariant } from '../catalog/skill-catalog';
import {
  CONTINUE_PROMPT,
  MAX_ORCHESTRATION_DEPTH,
  prepareRun,
  skillName,
  type CreateRunInput,
  type PrepareRunDeps,
} from './create-run';
import type { RunReferences } from './run-references';

const TEAM = 'team-1';
const OTHER_TEAM = 'team-2';
const USER_ID = 'user-1';
const AGENT_ID = 'agent-1';
const ENV_ID = 'Env0000000000000000001';
const CONVERSATION = '7d1f2a40-1c3b-4a5e-9f6d-2b8c0e4a1d33';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const userCaller: Caller__Output = {
  team_id: TEAM,
  principal_type: 'USER',
  principal_id: USER_ID,
  role: 'MEMBER',
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
};
const agentCaller: Caller__Output = { ...userCaller, principal_type: 'AGENT', principal_id: AGENT_ID };

const identity = (id: string, config: Prisma.JsonObject = {}, teamId = TEAM): AgentIdentity => ({
  id,
  teamId,
  name: id,
  config,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

const environment = (id: string, teamId = TEAM): Environment => ({
  id,
  teamId,
  scopeType: 'TEAM',
  ownerId: teamId,
  name: id,
  description: null,
  dockerImage: null,
  repositories: [{ url: 'https://git.example/acme/app.git', owner: 'acme', repo: 'app' }],
  setupCommands: ['npm ci'],
  allowedHosts: ['registry.npmjs.org'],
  snapshots: true,
  failureSessionRetentionMinutes: null,
  setupTimeoutSeconds: null,
  shareToken: null,
  createdById: USER_ID,
  lastEditorId: USER_ID,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

/** The references as PostgreSQL answers them (prisma-run-references.ts), from rows kept in memory. */
class InMemoryRunReferences implements RunReferences {
  identities: AgentIdentity[] = [identity(AGENT_ID)];
  /** Identities beyond their team's plan limit. */
  unavailable = new Set<string>();
  environments: Environment[] = [];
  runs: Array<{ id: string; teamId: string; ancestorIds: string[]; conversationId: string }> = [];
  users = [
    { id: USER_ID, teamId: TEAM, email: 'ada@example.com' },
    { id: 'user-2', teamId: TEAM, email: 'Grace.Hopper@example.com' },
    { id: 'outsider', teamId: OTHER_TEAM, email: 'outsider@example.com' },
  ];

  async findIdentity(teamId: string, identityId: string) {
    return this.identities.find((i) => i.id === identityId && i.teamId === teamId) ?? null;
  }

  async availableIdentityIds(teamId: string) {
    return new Set(
      this.identities.filter((i) => i.teamId === teamId && !this.unavailable.has(i.id)).map((i) => i.id),
    );
  }

  async findEnvironment(caller: Caller__Output, environmentId: string) {
    return this.environments.find((e) => e.id === environmentId && e.teamId === caller.team_id) ?? null;
  }

  async findRun(teamId: string, runId: string) {
    const run = this.runs.find((r) => r.id === runId && r.teamId === teamId);
    return run ? { id: run.id, ancestorIds: run.ancestorIds } : null;
  }

  async conversationExists(teamId: string, conversationId: string) {
    return this.runs.some((r) => r.conversationId === conversationId && r.teamId === teamId);
  }

  async findMemberId(teamId: string, idOrEmail: string) {
    const member = this.users.find(
      (u) => u.teamId === teamId && (u.id === idOrEmail || u.email.toLowerCase() === idOrEmail.toLowerCase()),
    );
    return member?.id ?? null;
  }
}

const variant = (id: string, name: string): SkillVariant => ({
  id,
  name,
  base_prompt: `Instructions of ${name}`,
  description: '',
  environments: [],
  source: { owner: 'acme', name: 'tools', skill_path: `${name}/SKILL.md` },
});

describe('prepareRun', () => {
  let references: InMemoryRunReferences;
  /** Skills the catalog discovered, by the spec that names them. */
  let skills: Map<string, SkillVariant>;
  let deps: PrepareRunDeps;
  const prepare = (input: Partial<CreateRunInput>, caller: Caller__Output = userCaller) =>
    prepareRun(deps, caller, { prompt: 'Fix the build', ...input });

  beforeEach(() => {
    references = new InMemoryRunReferences();
    skills = new Map();
    deps = {
      references,
      defaultHarness: 'demo',
      catalog: {
        models: new ModelCatalog(BUILT_IN_MODEL_CATALOG),
        skills: { resolve: async (_caller, spec) => skills.get(spec) },
      },
    };
  });

  describe('title', () => {
    it('is the first non-empty line of the prompt, trimmed', async () => {
      const run = await prepare({ prompt: '\n   \n  Fix the build  \nthen run the tests' });
      expect(run.title).toBe('Fix the build');
    });

    it('is cut to 80 characters, ending in "..."', async () => {
      expect((await prepare({ prompt: 'a'.repeat(80) })).title).toBe('a'.repeat(80));
      expect((await prepare({ prompt: 'b'.repeat(81) })).title).toBe(`${'b'.repeat(77)}...`);
    });

    it('is the given title, trimmed, when it is not blank', async () => {
      expect((await prepare({ title: '  Release notes  ' })).title).toBe('Release notes');
      expect((await prepare({ title: '   ' })).title).toBe('Fix the build');
    });

    it('is "Run <skill>" for a skill run without a prompt', async () => {
      const run = await prepare({ prompt: '  ', skill: 'acme/tools:lint' });
      expect(run.title).toBe('Run acme/tools:lint');
      expect(run.prompt).toBe('  ');
    });
  });

  describe('prompt', () => {
    it('is required unless a skill is given', async () => {
      await expect(prepare({ prompt: ' \n ' })).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'prompt is required unless a skill is given',
      });
    });

    it('continues the conversation when a conversation_id is given without one', async () => {
      references.runs.push({ id: 'previous', teamId: TEAM, ancestorIds: [], conversationId: CONVERSATION });
      const run = await prepare({ prompt: '  ', conversationId: CONVERSATION });
      expect(run.prompt).toBe(CONTINUE_PROMPT);
      expect(run.title).toBe(CONTINUE_PROMPT);
      expect(run.conversationId).toBe(CONVERSATION);
    });

    it('is kept when a conversation is continued with one', async () => {
      references.runs.push({ id: 'previous', teamId: TEAM, ancestorIds: [], conversationId: CONVERSATION });
      expect((await prepare({ prompt: 'Now the docs', conversationId: CONVERSATION })).prompt).toBe(
        'Now the docs',
      );
    });
  });

  describe('conversation_id', () => {
    it('starts a new conversation when none is given', async () => {
      const run = await prepare({});
      expect(run.conversationId).toMatch(UUID);
      expect(run.conversationId).not.toBe(run.id);
    });

    it("must be a conversation of the caller's team", async () => {
      references.runs.push({
        id: 'theirs',
        teamId: OTHER_TEAM,
        ancestorIds: [],
        conversationId: CONVERSATION,
      });
      await expect(prepare({ conversationId: CONVERSATION })).rejects.toMatchObject({
        code: 'resource_not_found',
        message: 'conversation_id: Conversation not found',
      });
    });

    it('that is not a UUID is not found, without a lookup (the column is a UUID)', async () => {
      const lookup = jest.spyOn(references, 'conversationExists');
      await expect(prepare({ conversationId: 'not-a-uuid' })).rejects.toMatchObject({
        code: 'resource_not_found',
        message: 'conversation_id: Conversation not found',
      });
      expect(lookup).not.toHaveBeenCalled();
    });
  });

  describe('parent_run_id', () => {
    it('makes the parent and its ancestors the run’s ancestors, parent first', async () => {
      references.runs.push({
        id: 'parent',
        teamId: TEAM,
        ancestorIds: ['grandparent', 'root'],
        conversationId: 'c',
      });
      const run = await prepare({ parentRunId: 'parent' });
      expect(run.parentRunId).toBe('parent');
      expect(run.ancestorIds).toEqual(['parent', 'grandparent', 'root']);
    });

    it("must name a run of the caller's team", async () => {
      references.runs.push({ id: 'parent', teamId: OTHER_TEAM, ancestorIds: [], conversationId: 'c' });
      await expect(prepare({ parentRunId: 'parent' })).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'parent_run_id does not name a run you can access',
      });
    });

    it(`allows ${MAX_ORCHESTRATION_DEPTH} ancestors and refuses one more`, async () => {
      const chain = (n: number) => Array.from({ length: n }, (_, i) => `ancestor-${i}`);
      references.runs.push(
        {
          id: 'deepest-allowed',
          teamId: TEAM,
          ancestorIds: chain(MAX_ORCHESTRATION_DEPTH - 1),
          conversationId: 'c',
        },
        { id: 'too-deep', teamId: TEAM, ancestorIds: chain(MAX_ORCHESTRATION_DEPTH), conversationId: 'c' },
      );
      expect((await prepare({ parentRunId: 'deepest-allowed' })).ancestorIds).toHaveLength(
        MAX_ORCHESTRATION_DEPTH,
      );
      await expect(prepare({ parentRunId: 'too-deep' })).rejects.toMatchObject({
        code: 'invalid_request',
        message: `orchestration depth exceeds the maximum of ${MAX_ORCHESTRATION_DEPTH}`,
      });
    });

    it('is absent from a top-level run', async () => {
      const run = await prepare({});
      expect(run.parentRunId).toBeNull();
      expect(run.ancestorIds).toEqual([]);
    });
  });

  describe('creator and executor', () => {
    it('are the calling user', async () => {
      expect(await prepare({})).toMatchObject({
        teamId: TEAM,
        creatorType: 'USER',
        creatorId: USER_ID,
        executorType: 'USER',
        executorId: USER_ID,
      });
    });

    it('the executor is the agent named by agent_identity_uid', async () => {
      references.identities.push(identity('reviewer'));
      expect(await prepare({ agentIdentityUid: 'reviewer' })).toMatchObject({
        creatorType: 'USER',
        creatorId: USER_ID,
        executorType: 'AGENT',
        executorId: 'reviewer',
      });
    });

    it("agent_identity_uid must name an identity of the caller's team", async () => {
      references.identities.push(identity('theirs', {}, OTHER_TEAM));
      await expect(prepare({ agentIdentityUid: 'theirs' })).rejects.toMatchObject({
        code: 'resource_not_found',
        message: 'Agent identity not found',
      });
    });

    it("agent_identity_uid must name an identity the team's plan lets run", async () => {
      references.identities.push(identity('beyond-limit'));
      references.unavailable.add('beyond-limit');
      await expect(prepare({ agentIdentityUid: 'beyond-limit' })).rejects.toMatchObject({
        code: 'feature_not_available',
      });
    });

    it('are the calling agent for an agent key', async () => {
      expect(await prepare({}, agentCaller)).toMatchObject({
        creatorType: 'AGENT',
        creatorId: AGENT_ID,
        executorType: 'AGENT',
        executorId: AGENT_ID,
      });
    });
  });

  describe('on_behalf_of', () => {
    beforeEach(() => {
      references.identities = [identity(AGENT_ID, { on_behalf_of_enabled: true })];
    });

    it('makes the team member with that user ID the creator; the agent still executes', async () => {
      expect(await prepare({ onBehalfOf: 'user-2' }, agentCaller)).toMatchObject({
        creatorType: 'USER',
        creatorId: 'user-2',
        executorType: 'AGENT',
        executorId: AGENT_ID,
      });
    });

    it('names the member by email, in any case', async () => {
      expect((await prepare({ onBehalfOf: 'grace.hopper@EXAMPLE.com' }, agentCaller)).creatorId).toBe(
        'user-2',
      );
    });

    it('must name a member of the caller’s team', async () => {
      for (const target of ['outsider', 'outsider@example.com', 'nobody@example.com']) {
        await expect(prepare({ onBehalfOf: target }, agentCaller)).rejects.toMatchObject({
          code: 'invalid_request',
          message: 'on_behalf_of: no member of this team has that email or user ID',
        });
      }
    });

    it('is refused to users and to agents without on_behalf_of_enabled', async () => {
      const refused = {
        code: 'not_authorized',
        message:
          'on_behalf_of: only API keys of an agent with on_behalf_of_enabled may create runs on behalf of a user',
      };
      await expect(prepare({ onBehalfOf: 'user-2' })).rejects.toMatchObject(refused);
      for (const config of [{}, { on_behalf_of_enabled: 'true' }, { on_behalf_of_enabled: false }]) {
        references.identities = [identity(AGENT_ID, config)];
        await expect(prepare({ onBehalfOf: 'user-2' }, agentCaller)).rejects.toMatchObject(refused);
      }
    });

    it('is decided by the calling agent’s identity, not the one executing the run', async () => {
      references.identities.push(identity('helper', { on_behalf_of_enabled: true }));
      references.identities[0] = identity(AGENT_ID);
      await expect(
        prepare({ onBehalfOf: 'user-2', agentIdentityUid: 'helper' }, agentCaller),
      ).rejects.toMatchObject({ code: 'not_authorized' });
    });
  });

  describe('skill', () => {
    it('names the config after the skill’s directory when the catalog does not know it', async () => {
      const run = await prepare({ skill: 'acme/tools:checks/lint/SKILL.md' });
      expect(run.skillSpec).toBe('acme/tools:checks/lint/SKILL.md');
      expect(run.skillInstructions).toBeNull();
      expect(run.configName).toBe('lint');
      expect(run.config).toMatchObject({ skill_spec: 'acme/tools:checks/lint/SKILL.md', name: 'lint' });
    });

    it('records the spec the catalog resolved, with its name and instructions', async () => {
      skills.set('tools:review', variant('acme/tools:review/SKILL.md', 'code-review'));
      const run = await prepare({ prompt: '', skill: 'tools:review' });
      expect(run).toMatchObject({
        skillSpec: 'acme/tools:review/SKILL.md',
        skillInstructions: 'Instructions of code-review',
        configName: 'code-review',
        title: 'Run acme/tools:review/SKILL.md',
      });
    });

    it('leaves a name given in the config', async () => {
      expect((await prepare({ skill: 'lint', config: { name: 'nightly lint' } })).configName).toBe(
        'nightly lint',
      );
    });

    it('is taken from config.skill_spec when no skill argument is given', async () => {
      expect((await prepare({ prompt: '', config: { skill_spec: 'acme/tools:docs' } })).skillSpec).toBe(
        'acme/tools:docs',
      );
    });

    it('is absent from a run without one', async () => {
      const run = await prepare({});
      expect(run).toMatchObject({ skillSpec: null, skillInstructions: null, configName: null });
      expect(run.config).not.toHaveProperty('skill_spec');
    });
  });

  describe('skillName', () => {
    it.each([
      ['acme/tools:checks/lint/SKILL.md', 'lint'],
      ['acme/tools:checks/lint/skill.md', 'lint'],
      ['tools:review', 'review'],
      ['acme/tools:docs/release/', 'release'],
      ['lint', 'lint'],
    ])('%s → %s', (spec, name) => {
      expect(skillName(spec)).toBe(name);
    });
  });

  describe('catalog', () => {
    it('gives the run the default model and the default harness', async () => {
      const run = await prepare({});
      expect(run.modelId).toBe(BUILT_IN_MODEL_CATALOG.default_model_id);
      expect(run.harness).toBe('demo');
      expect(run.environmentId).toBeNull();
      expect(run.environmentSpec).toBeUndefined();
    });

    it("takes the executing identity's model and environment, and snapshots the environment", async () => {
      references.environments.push(environment(ENV_ID));
      references.identities.push(
        identity('reviewer', { base_model: 'claude-opus-4', environment_id: ENV_ID }),
      );
      const run = await prepare({ agentIdentityUid: 'reviewer', config: { harness: { type: 'claude' } } });
      expect(run).toMatchObject({ harness: 'claude', modelId: 'claude-opus-4', environmentId: ENV_ID });
      expect(run.environmentSpec).toEqual({
        repositories: [{ url: 'https://git.example/acme/app.git' }],
        setup_commands: ['npm ci'],
        allowed_hosts: ['registry.npmjs.org'],
      });
    });

    it('tells the runner when the environment opted out of snapshots', async () => {
      references.environments.push({ ...environment(ENV_ID), snapshots: false });
      const run = await prepare({ config: { environment_id: ENV_ID, harness: { type: 'claude' } } });
      expect(run.environmentSpec).toMatchObject({ snapshot: false });
    });

    it('refuses an environment the caller cannot reach', async () => {
      references.environments.push(environment(ENV_ID, OTHER_TEAM));
      await expect(prepare({ config: { environment_id: ENV_ID } })).rejects.toMatchObject({
        code: 'resource_not_found',
        message: 'Environment not found',
      });
    });
  });

  describe('defaults and copied values', () => {
    it('runs from the API in normal mode, with empty metadata and no schedule', async () => {
      const run = await prepare({});
      expect(run).toMatchObject({
        source: 'API',
        mode: 'normal',
        scheduleId: null,
        scheduleName: null,
        scheduleCron: null,
      });
      expect(run.metadata).toStrictEqual({});
      expect(run.attachments).toStrictEqual([]);
    });

    it('keeps the given source, mode, metadata and schedule', async () => {
      const schedule = { id: 'sched-1', name: 'nightly', cron: '0 3 * * *' };
      const run = await prepare({
        source: 'SCHEDULED_AGENT',
        mode: 'plan',
        metadata: { ticket: 'OPS-1' },
        schedule,
      });
      expect(run).toMatchObject({
        source: 'SCHEDULED_AGENT',
        mode: 'plan',
        metadata: { ticket: 'OPS-1' },
        scheduleId: 'sched-1',
        scheduleName: 'nightly',
        scheduleCron: '0 3 * * *',
      });
    });

    it.each([
      ['warp', null],
      ['my-box', 'my-box'],
      [undefined, null],
    ])('worker_host %s → %s', async (workerHost, expected) => {
      expect((await prepare({ config: { worker_host: workerHost } })).workerHost).toBe(expected);
    });

    it('gives every attachment its own ID', async () => {
      const data = Buffer.from('{"a":1}');
      const run = await prepare({
        attachments: [
          { fileName: 'a.json', mimeType: 'application/json', data },
          { fileName: 'b.txt', mimeType: 'text/plain', data: Buffer.from('b') },
        ],
      });
      expect(run.attachments).toEqual([
        { id: expect.stringMatching(UUID), fileName: 'a.json', mimeType: 'application/json', data },
        {
          id: expect.stringMatching(UUID),
          fileName: 'b.txt',
          mimeType: 'text/plain',
          data: Buffer.from('b'),
        },
      ]);
      expect(run.attachments[0]!.id).not.toBe(run.attachments[1]!.id);
    });

    it('has fresh run and session IDs', async () => {
      const [a, b] = [await prepare({}), await prepare({})];
      expect(a.id).toMatch(UUID);
      expect(a.sessionId).toMatch(UUID);
      expect(new Set([a.id, a.sessionId, b.id, b.sessionId]).size).toBe(4);
    });
  });
});
