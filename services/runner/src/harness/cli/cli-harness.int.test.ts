import { randomInt, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import type { RunEvent } from '@conveyor/run-events';
import {
  longCommandScript,
  readEditRunScript,
  SCRIPT_COMMAND_OUTPUT,
  SCRIPT_FILE,
  SCRIPT_FINAL_TEXT,
  SCRIPT_TOOL_NAMES,
  startScriptedModelServer,
  type AgentCli,
  type ScriptedModelServer,
} from '@conveyor/testing';
import { MODEL_PROXY_ENDPOINT, ModelAccessGrant } from '../../model-proxy/model-access-grant';
import { startModelProxy, type RunningModelProxy } from '../../model-proxy/start-model-proxy';
import { baseRunEnvironment, HOME_DIR_NAME } from '../../sandbox/run-environment';
import type { RunSandbox } from '../../sandbox/run-sandbox';
import { UnsandboxedBackend } from '../../sandbox/unsandboxed-backend';
import { FollowupInbox } from '../followup-inbox';
import type { HarnessInput, HarnessOutcome, SessionFile } from '../harness';
import { harnessFor } from '../harness-registry';

// Real CLIs start in seconds (Gemini CLI, a large Node bundle, in several on a busy machine).
jest.setTimeout(180_000);

/** The skill's description (written into its SKILL.md) names the spec; only the CLI's skill discovery shows it to the model. */
const SKILL_SPEC = 'acme/agent-skills:skills/minimal-edits/SKILL.md';

const MODELS: Record<AgentCli, string> = {
  claude: 'claude-sonnet-4-5',
  codex: 'gpt-5.5',
  gemini: 'gemini-2.5-pro',
};
const PROVIDERS: Record<AgentCli, string> = { claude: 'anthropic', codex: 'openai', gemini: 'gemini' };
/** The team's provider key: the model proxy holds it, the CLI only ever sees its run's token. */
const PROVIDER_KEY = `sk-cli-harness-test-${randomUUID()}`;

/** Command lines of every process on this machine whose arguments contain `needle`. */
async function processesMatching(needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle)) found.push(cmdline.replace(/\0/g, ' '));
  }
  return found;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each<AgentCli>(['claude', 'codex', 'gemini'])(
  'the %s harness drives the real CLI in a sandbox',
  (cli) => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    let server: ScriptedModelServer;
    let proxy: RunningModelProxy;
    let root: string;
    /** Calls of the CLI the model proxy refused as not inference: none, or its allow-list misses a real call. */
    const refused: string[] = [];

    beforeAll(async () => {
      server = await startScriptedModelServer();
      // The runner's model proxy in front of the scripted server, as an installation points it at its provider.
      proxy = await startModelProxy(
        {
          ANTHROPIC_BASE_URL: server.url,
          OPENAI_BASE_URL: `${server.url}/v1`,
          GOOGLE_GEMINI_BASE_URL: server.url,
          MODEL_PROXY_HOST: '127.0.0.1',
          MODEL_PROXY_PORT: 0,
        },
        logger,
      );
      root = await mkdtemp(path.join(os.tmpdir(), `cli-harness-${cli}-`));
    });
    afterAll(async () => {
      await proxy.proxy.close();
      await server.close();
    });

    /** One execution's model access through the proxy, as the executor grants it from the run's credential. */
    const grantFor = (runId: string) =>
      ModelAccessGrant.register(
        proxy,
        runId,
        {
          provider: PROVIDERS[cli],
          api_key: PROVIDER_KEY,
          secret_name: 'KEY',
          models: [MODELS[cli]],
          input_usd_per_million_tokens: 0,
          output_usd_per_million_tokens: 0,
          budget_usd: 0,
          spent_usd: 0,
        },
        {
          onUsage: () => undefined,
          onBudgetExceeded: () => undefined,
          onKeyRejected: () => undefined,
          onRefused: (refusal) => void refused.push(refusal.reason),
        },
      );

    /** A run's workspace and sandbox, reaching the model proxy as its `model-proxy` endpoint. */
    async function runWorkspace(
      runId: string = randomUUID(),
      under = root,
    ): Promise<{ runId: string; dir: string; sandbox: RunSandbox }> {
      const dir = path.join(under, runId);
      await mkdir(path.join(dir, HOME_DIR_NAME), { recursive: true });
      const sandbox = await new UnsandboxedBackend(logger, under, true).prepare({
        runId,
        allowedHosts: [],
        endpoints: [{ name: MODEL_PROXY_ENDPOINT, target: proxy.target }],
        limits: { wallClockMs: 120_000, maxProcesses: 512, memoryBytes: 4 * 1024 ** 3, diskBytes: 1024 ** 3 },
      });
      return { runId, dir, sandbox };
    }

    async function execute(
      ws: { runId: string; dir: string; sandbox: RunSandbox },
      options: {
        execution?: number;
        prompt?: string;
        followups?: string[];
        skill?: boolean;
        session?: SessionFile;
        drive?: (inbox: FollowupInbox, abort: AbortController) => void;
      } = {},
    ): Promise<{ outcome: HarnessOutcome; events: RunEvent[] }> {
      const config = {
        harness: { model_id: MODELS[cli] },
        ...(options.skill ? { skill_spec: SKILL_SPEC } : {}),
      };
      const input: HarnessInput = {
        runId: ws.runId,
        execution: options.execution ?? 1,
        prompt: options.prompt ?? 'Rename world to conveyor in hello.txt',
        followups: options.followups ?? [],
        config,
        mode: 'normal',
        debugSession: false,
        workspaceDir: ws.sandbox.workspaceDir,
        attachments: [],
        ...(options.skill ? { skillInstructions: 'Keep every change minimal.' } : {}),
        ...(options.session ? { session: options.session } : {}),
      };
      const grant = grantFor(ws.runId);
      input.modelAccess = grant.access(ws.sandbox, config);
      const events: RunEvent[] = [];
      const inbox = new FollowupInbox();
      const abort = new AbortController();
      const harness = harnessFor(cli, {});
      await harness.prepare(input);
      options.drive?.(inbox, abort);
      const env = baseRunEnvironment({ runId: ws.runId, workspaceDir: ws.sandbox.workspaceDir });
      const outcome = await harness
        .run(input, { emit: (e) => events.push(e), inbox, signal: abort.signal, sandbox: ws.sandbox, env })
        .finally(() => grant.close());
      return { outcome, events };
    }

    it('reads, edits and runs a command in the workspace; maps the steps; finds the skill; the transcript is the session file; a follow-up resumes it, on another runner too', async () => {
      const ws = await runWorkspace();
      await writeFile(path.join(ws.dir, SCRIPT_FILE.name), SCRIPT_FILE.before);
      server.enqueue(...readEditRunScript(cli, ws.dir));
      const seen = server.requests.length;

      const first = await execute(ws, { skill: true });

      expect(first.outcome).toMatchObject({ state: 'SUCCEEDED', message: SCRIPT_FINAL_TEXT });
      expect(await readFile(path.join(ws.dir, SCRIPT_FILE.name), 'utf8')).toBe(SCRIPT_FILE.after);
      expect((await readFile(path.join(ws.dir, SCRIPT_COMMAND_OUTPUT), 'utf8')).trim()).toBe(
        String(SCRIPT_FILE.after.length),
      );
      const calls = first.events.filter(
        (e): e is Extract<RunEvent, { kind: 'tool_call' }> => e.kind === 'tool_call',
      );
      expect(calls.map((c) => c.name)).toEqual(SCRIPT_TOOL_NAMES[cli]);
      const results = first.events.filter((e) => e.kind === 'tool_result');
      expect(results.map((r) => r.kind === 'tool_result' && r.call_id)).toEqual(calls.map((c) => c.call_id));
      expect(first.events).toContainEqual({ kind: 'agent_message', text: SCRIPT_FINAL_TEXT });
      const usage = first.events.filter((e) => e.kind === 'usage');
      expect(usage.length).toBeGreaterThan(0);
      expect(
        usage.reduce((n, e) => n + (e.kind === 'usage' ? (e.output_tokens ?? 0) : 0), 0),
      ).toBeGreaterThan(0);
      // The CLI sent its per-run token to the model proxy, which swapped it for the provider key.
      const agentTurns = server.requests.slice(seen).filter((r) => r.scripted);
      expect(agentTurns).toHaveLength(4);
      for (const r of agentTurns) expect(r.apiKey).toBe(PROVIDER_KEY);
      // The CLI discovered the run's skill where it was installed and offered it to the model.
      expect(JSON.stringify(agentTurns[0]!.body)).toContain(SKILL_SPEC);

      // The transcript is the CLI's own session file, byte for byte, read inside the sandbox.
      const transcript = first.outcome.transcript!;
      expect(transcript.toString()).toContain(SCRIPT_FINAL_TEXT);
      const sessionFiles = (await readdir(path.join(ws.dir, HOME_DIR_NAME), { recursive: true })).filter(
        (f) => /\.jsonl$/.test(f) && !f.includes('history'),
      );
      const onDisk = await Promise.all(
        sessionFiles.map((f) => readFile(path.join(ws.dir, HOME_DIR_NAME, f))),
      );
      expect(onDisk.some((b) => b.equals(transcript))).toBe(true);

      // The session the execution hands back is that file, by its path in HOME.
      expect(sessionFiles).toContain(first.outcome.session!.path);
      expect(first.outcome.session!.content.equals(transcript)).toBe(true);
      await ws.sandbox.destroy();

      // Execution 2 runs on another runner: an empty HOME elsewhere, given only the kept session. It resumes the session,
      // so the model receives the earlier turns with the follow-up.
      const elsewhere = await runWorkspace(
        ws.runId,
        await mkdtemp(path.join(os.tmpdir(), `cli-harness-${cli}-other-`)),
      );
      server.enqueue({ text: 'The follow-up is handled.' });
      const second = await execute(elsewhere, {
        execution: 2,
        followups: ['Now say what you changed.'],
        session: first.outcome.session,
      });
      expect(second.outcome).toMatchObject({ state: 'SUCCEEDED', message: 'The follow-up is handled.' });
      const resumed = JSON.stringify(server.requests.filter((r) => r.scripted).at(-1)!.body);
      expect(resumed).toContain('Now say what you changed.');
      expect(resumed).toContain('Rename world to conveyor in hello.txt');
      expect(resumed).toContain('Let me look at the file.');
      // Only this execution's part of the session file; the session handed back now holds both executions.
      expect(second.outcome.transcript!.toString()).toContain('The follow-up is handled.');
      if (cli !== 'gemini')
        expect(second.outcome.transcript!.toString()).not.toContain('Let me look at the file.');
      expect(second.outcome.session!.content.toString()).toContain('Let me look at the file.');
      expect(second.outcome.session!.content.toString()).toContain('The follow-up is handled.');
      expect(refused).toEqual([]);
      await elsewhere.sandbox.destroy();
    });

    it('a follow-up arriving while the agent works is handled in the same execution, after the earlier turn', async () => {
      const ws = await runWorkspace();
      server.enqueue({ text: 'First answer.' }, { text: 'Second answer.' });
      const { outcome } = await execute(ws, {
        prompt: 'Say something',
        drive: (inbox) => inbox.push({ followup_id: 'f-1', message: 'Say something else' }),
      });
      expect(outcome).toMatchObject({ state: 'SUCCEEDED', message: 'Second answer.' });
      const last = JSON.stringify(server.requests.filter((r) => r.scripted).at(-1)!.body);
      expect(last).toContain('Say something else');
      expect(last).toContain('First answer.');
      await ws.sandbox.destroy();
    });

    it('cancel ends the CLI and every process it started', async () => {
      const ws = await runWorkspace();
      const seconds = randomInt(30_000, 90_000);
      server.enqueue(...longCommandScript(cli, seconds));
      const needle = `timeout ${seconds}`;
      const { outcome } = await execute(ws, {
        prompt: 'Wait a while',
        drive: (_inbox, abort) => {
          void until(
            async () => ((await processesMatching(needle)).length > 0 ? true : undefined),
            'the agent to start sleeping',
          ).then(() => abort.abort());
        },
      });
      expect(outcome.state).toBe('ERROR');
      expect(await processesMatching(needle)).toEqual([]);
      expect(await processesMatching(ws.dir)).toEqual([]);
      await ws.sandbox.destroy();
    });
  },
);
