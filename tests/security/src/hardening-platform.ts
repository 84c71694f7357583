import path from 'node:path';
import {
  apiCall,
  startPlatform,
  startScriptedModelServer,
  type RunningPlatform,
  type ScriptedModelServer,
} from '@conveyor/testing';

/** The hostile command-harness agent and the fixtures it and setup commands run inside the sandbox. */
export const FIXTURES = path.resolve(__dirname, '../fixtures');

/** Every string anywhere in a JSON value (the conversation's messages, whatever their nesting). */
export const stringsIn = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : value && typeof value === 'object'
      ? Object.values(value).flatMap(stringsIn)
      : [];

/**
 * The real platform with bubblewrap runs whose `claude`, `codex` and `gemini` harnesses are the hostile agent
 * (fixtures/run-hardening-agent.js), in front of a scripted model server holding `providerKey` for each provider.
 */
export async function startHardeningPlatform(
  providerKey: string,
): Promise<{ platform: RunningPlatform; model: ScriptedModelServer }> {
  const model = await startScriptedModelServer();
  const agent = `${process.execPath} ${path.join(FIXTURES, 'run-hardening-agent.js')}`;
  let platform: RunningPlatform;
  try {
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'bubblewrap',
        HARNESS_COMMANDS: JSON.stringify({ claude: agent, codex: agent, gemini: agent }),
        SANDBOX_READONLY_PATHS: FIXTURES,
        ANTHROPIC_BASE_URL: model.url,
        OPENAI_BASE_URL: `${model.url}/v1`,
        GOOGLE_GEMINI_BASE_URL: model.url,
      },
    });
  } catch (err) {
    await model.close();
    throw err;
  }
  for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY'])
    expect((await apiCall(platform, 'PUT', `/secrets/${name}`, { value: providerKey })).status).toBe(200);
  return { platform, model };
}
