import { randomUUID } from 'node:crypto';
import { apiCall, type Json } from '@conveyor/testing';
import { cluster, eventually, kubectl } from './cluster';

// Runs through the deployed platform's public API, as the suite's cases make and follow them.

export const MODEL = 'claude-sonnet-4-5';
/** A run image of its own (a marker file on the default one), so a Pod's image shows it came from the environment. */
export const RUN_IMAGE = 'conveyor/run-alt:k8s-test';

/** The public API with the seeded key, or another team's `key`. */
export const api = (method: string, path: string, body?: unknown, key?: string) =>
  apiCall(cluster as never, method, path, body, key);

export async function waitForState(
  runId: string,
  states: string[],
  timeoutMs = 240_000,
  key?: string,
): Promise<Json> {
  let last: Json = {};
  return eventually(
    async () => {
      last = (await api('GET', `/agent/runs/${runId}`, undefined, key)).body;
      return states.includes(last.state as string) ? last : undefined;
    },
    () => `run ${runId} to reach ${states.join('|')} (last: ${JSON.stringify(last)})`,
    timeoutMs,
  );
}

/** A run of `prompt` in a new environment (no image: the chart's default run image) named `name`; its ID. */
export async function runInNewEnvironment(name: string, prompt: string): Promise<string> {
  const environment = await api('POST', '/agent/environments', { name });
  if (environment.status !== 201)
    throw new Error(`environment: ${environment.status} ${JSON.stringify(environment.body)}`);
  const created = await api('POST', '/agent/runs', {
    prompt,
    config: { environment_id: environment.body.uid, harness: { model_id: MODEL } },
  });
  if (created.status !== 200) throw new Error(`run: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.run_id as string;
}

/** The run's timeline events, oldest first. */
export const timeline = async (runId: string) =>
  (
    (await api('GET', `/agent/runs/${runId}/timeline`)).body as {
      events: Array<{ kind: string; data: Record<string, unknown> }>;
    }
  ).events;

/**
 * When the run's timeline first holds more than `seen` events (polled every half second): the time a run that lost
 * its runner or its Pod streams again.
 */
export const nextEventAt = (runId: string, seen: number, timeoutMs = 600_000): Promise<number> =>
  eventually(
    async () => ((await timeline(runId)).length > seen ? Date.now() : undefined),
    `run ${runId}'s next event`,
    timeoutMs,
  );

/** The agent's tool calls with their outputs, as JSON text. */
export const toolOutputs = async (runId: string, key?: string): Promise<string> => {
  const conversation = (await api('GET', `/agent/runs/${runId}/conversation`, undefined, key)).body as {
    messages: Array<{ role: string; steps: Json[] }>;
  };
  const steps = conversation.messages.filter((m) => m.role === 'agent').flatMap((m) => m.steps);
  return JSON.stringify(steps.filter((s) => s.type === 'tool_call'));
};

/** The orchestrator's CLI in its Pod (creating a team needs the database, which only the platform reaches). */
const orchestratorCli = async (...args: string[]): Promise<Json> =>
  JSON.parse(
    await kubectl(
      'exec',
      'deploy/conveyor-orchestrator',
      '--',
      'node',
      'services/orchestrator/dist/cli/main.js',
      ...args,
    ),
  ) as Json;

/** A new team with an admin, and that admin's API key: another tenant than the seeded key's. */
export async function otherTeamKey(name: string): Promise<string> {
  const nonce = randomUUID().slice(0, 8);
  const team = await orchestratorCli('team', 'create', '--name', `${name} ${nonce}`);
  const user = await orchestratorCli(
    'user',
    'create',
    '--team',
    team.id as string,
    '--email',
    `${name.toLowerCase()}-${nonce}@k8s.test`,
    '--role',
    'ADMIN',
  );
  return ((await orchestratorCli('key', 'create', '--user', user.id as string)) as { key: string }).key;
}
