import { randomInt, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  longCommandScript,
  readEditRunScript,
  SCRIPT_COMMAND_STDOUT,
  SCRIPT_FILE,
  SCRIPT_FINAL_TEXT,
  SCRIPT_TOOL_NAMES,
  SCRIPTED_USAGE,
  startScriptedModelServer,
  type AgentCli,
  type ScriptedModelServer,
} from '@conveyor/testing';
import { startPlatform, type RunningPlatform } from './platform';
import { processesMatching } from './process-identity';
import { apiCall, eventually, waitForRunState, type Json } from './run-waits';

// The real Claude Code, Codex and Gemini CLIs, installed with the runner, against a scripted model server: the only
// fake sits at the network seam. The runner's model proxy forwards to it (ANTHROPIC_BASE_URL and friends) with the
// team secret's key.
jest.setTimeout(240_000);

const MODELS: Record<AgentCli, string> = {
  claude: 'claude-sonnet-4-5',
  codex: 'gpt-5.5',
  gemini: 'gemini-2.5-pro',
};
/** The team secret each harness reads its provider key from by default (docs/harnesses.md). */
const SECRET_NAMES: Record<AgentCli, string> = {
  claude: 'ANTHROPIC_API_KEY',
  codex: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
};
const PROVIDER_KEY = `sk-e2e-provider-${randomUUID()}`;
/** Real CLIs take seconds per turn on a loaded two-core machine. */
const RUN_TIMEOUT_MS = 120_000;

/** `pid` and its ancestors up to (not including) the runner or its helper: the agent's command, its shell, the CLI, the sandbox. */
async function chainBelowRunner(pid: number): Promise<number[]> {
  const chain: number[] = [];
  for (let current = pid; current > 1;) {
    const cmdline = await readFile(`/proc/${current}/cmdline`, 'utf8').catch(() => '');
    // Sandboxed processes are the children of the runner's privileged helper, itself the runner's child.
    if (/services\/runner\/dist\/(main|sandbox\/bwrap\/privileged\/helper-main)\.js/.test(cmdline))
      return chain;
    chain.push(current);
    const stat = await readFile(`/proc/${current}/stat`, 'utf8');
    current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  throw new Error(`process ${pid} is not the runner's`);
}

const alive = (pid: number) =>
  readFile(`/proc/${pid}/stat`, 'utf8').then(
    () => true,
    () => false,
  );

describe.each<AgentCli>(['claude', 'codex', 'gemini'])('a %s run drives the real CLI end to end', (cli) => {
  let server: ScriptedModelServer;
  let platform: RunningPlatform;
  let environmentId: string;

  beforeAll(async () => {
    server = await startScriptedModelServer();
    platform = await startPlatform({
      env: {
        // As `npm start` runs them: each CLI inside the run's bubblewrap sandbox.
        RUN_SANDBOX: 'bubblewrap',
        DEFAULT_HARNESS: cli,
        ANTHROPIC_BASE_URL: server.url,
        OPENAI_BASE_URL: `${server.url}/v1`,
        GOOGLE_GEMINI_BASE_URL: server.url,
        MODELS_CONFIG: JSON.stringify({
          models: Object.entries(MODELS).map(([harness, id]) => ({
            id,
            provider: harness,
            harnesses: [harness],
          })),
        }),
      },
    });
    expect(
      (await apiCall(platform, 'PUT', `/secrets/${SECRET_NAMES[cli]}`, { value: PROVIDER_KEY })).status,
    ).toBe(200);
    const environment = await apiCall(platform, 'POST', '/agent/environments', {
      name: `${cli} workspace`,
      setup_commands: [`printf '${SCRIPT_FILE.before.replace('\n', '\\n')}' > ${SCRIPT_FILE.name}`],
    });
    expect(environment.status).toBe(201);
    environmentId = environment.body.uid as string;
  });
  afterAll(async () => {
    await platform?.stop();
    await server?.close();
  });

  const createRun = async (prompt: string): Promise<string> => {
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt,
      config: { environment_id: environmentId, harness: { model_id: MODELS[cli] } },
    });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };
  /** The run's workspace as its agent sees it: mounted at /workspace inside the run's sandbox (docs/sandbox.md). */
  const SANDBOX_WORKSPACE = '/workspace';

  it('reads, edits and runs a command in the workspace; conversation, usage and transcript come from the CLI; a follow-up after the end resumes its session', async () => {
    const runId = await createRun('Rename world to conveyor in hello.txt');
    server.enqueue(...readEditRunScript(cli, SANDBOX_WORKSPACE));
    const firstTurn = server.requests.length;

    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: SCRIPT_FINAL_TEXT } });

    // The conversation: the prompt, then the agent's message with each tool step (arguments and result) and its answer.
    const conversation = (await apiCall(platform, 'GET', `/agent/runs/${runId}/conversation`)).body as {
      messages: Array<{ role: string; steps: Json[] }>;
    };
    const agent = conversation.messages.filter((m) => m.role === 'agent').flatMap((m) => m.steps);
    const tools = agent.filter((s) => s.type === 'tool_call');
    expect(tools.map((s) => s.name)).toEqual(SCRIPT_TOOL_NAMES[cli]);
    for (const step of tools) {
      expect(step.status).toBe('completed');
      expect(step.input).toEqual(expect.any(Object));
    }
    // Gemini CLI's stream reports no output for read_file (its session file has it); the others show the content.
    if (cli !== 'gemini') expect(JSON.stringify(tools[0]?.output)).toContain('hello world');
    // The agent's tools really ran in the workspace (deleted when the run ended): the command printed the edited file.
    expect(JSON.stringify(tools.at(-1)?.output)).toContain(SCRIPT_COMMAND_STDOUT);
    expect(JSON.stringify(tools.at(-1)?.output)).not.toContain('hello world');
    expect(agent.filter((s) => s.type === 'text').map((s) => s.text)).toEqual([
      'Let me look at the file.',
      SCRIPT_FINAL_TEXT,
    ]);

    // The model proxy metered every model call of the run (agent turns and the CLI's side requests): request_usage.
    const calls = server.requests.slice(firstTurn).filter((r) => !/count_?tokens/i.test(r.url)).length;
    const tokens = {
      input_tokens: calls * SCRIPTED_USAGE.inputTokens,
      output_tokens: calls * SCRIPTED_USAGE.outputTokens,
    };
    expect(done.request_usage).toMatchObject({
      total_tokens: tokens.input_tokens + tokens.output_tokens,
      usage_by_category: tokens,
    });

    // Every agent turn reached the model through the proxy, which swapped the run's token for the team's key.
    const turns = server.requests.slice(firstTurn).filter((r) => r.scripted);
    expect(turns).toHaveLength(4);
    for (const turn of turns) expect(turn.apiKey).toBe(PROVIDER_KEY);

    // The transcript is the CLI's own session file (not the platform's event log).
    const transcript = await (
      await fetch(`${platform.apiUrl}/agent/runs/${runId}/transcript`, {
        headers: { Authorization: `Bearer ${platform.apiKey}` },
      })
    ).text();
    expect(transcript).toContain(SCRIPT_FINAL_TEXT);
    expect(transcript).not.toContain('"kind":"state_changed"');
    // Claude Code and Gemini CLI name their session after the run; Codex's rollout opens with its session_meta.
    expect(transcript).toContain(cli === 'codex' ? '"type":"session_meta"' : `"sessionId":"${runId}"`);

    // A follow-up after the end (the workspace is gone) resumes the same session, which the platform kept: the model
    // receives the earlier turns, the agent's own included, with the follow-up.
    server.enqueue({ text: 'I changed one word.' });
    const beforeFollowup = server.requests.length;
    const followup = await apiCall(platform, 'POST', `/agent/runs/${runId}/followups`, {
      message: 'What did you change?',
    });
    expect(followup.body).toMatchObject({ routed_to: 'new_execution' });
    const resumed = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], RUN_TIMEOUT_MS);
    expect(resumed).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'I changed one word.' } });
    const lastTurn = JSON.stringify(server.requests.slice(beforeFollowup).find((r) => r.scripted)!.body);
    expect(lastTurn).toContain('What did you change?');
    expect(lastTurn).toContain('Rename world to conveyor in hello.txt');
    expect(lastTurn).toContain('Let me look at the file.');
  });

  it('cancel ends the CLI and every process it started', async () => {
    const seconds = randomInt(30_000, 90_000);
    const runId = await createRun('Wait for a while');
    server.enqueue(...longCommandScript(cli, seconds));
    const needle = `timeout ${seconds}`;
    await eventually(
      async () => (await processesMatching(needle)).length > 0,
      'the agent to start its long command',
      platform,
      RUN_TIMEOUT_MS,
    );
    const tree = await chainBelowRunner((await processesMatching(needle))[0]!);
    expect(tree.length).toBeGreaterThan(2);

    // Cancel answers the run ID as plain text (contract §2.10).
    const cancelled = await fetch(`${platform.apiUrl}/agent/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${platform.apiKey}` },
    });
    expect({ status: cancelled.status, body: await cancelled.text() }).toEqual({ status: 200, body: runId });
    await waitForRunState(platform, runId, ['CANCELLED'], RUN_TIMEOUT_MS);
    await eventually(
      async () =>
        (await processesMatching(needle)).length === 0 &&
        !(await Promise.all(tree.map(alive))).includes(true),
      'the process tree to end',
      platform,
      RUN_TIMEOUT_MS,
    );
  });
});
