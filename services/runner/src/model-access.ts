import { randomBytes } from 'node:crypto';
import type { ModelAccess } from './harness/harness';
import type { RunSandbox, SandboxEndpoint } from './sandbox/run-sandbox';

/** The sandbox endpoint name under which a run reaches its model endpoint. */
export const MODEL_ENDPOINT_NAME = 'model';

/** Default model per CLI harness when the run names none (`harness.model_id`). */
const DEFAULT_MODELS: Record<string, string> = { claude: 'claude-sonnet-4', codex: 'gpt-5', gemini: 'gemini-2.5-pro' };

/** `MODEL_ENDPOINT` (a URL reachable from the runner) as a sandbox endpoint: the only address a run's CLI may call. */
export function modelEndpoint(url: string | undefined): SandboxEndpoint[] {
  if (!url) return [];
  const parsed = new URL(url);
  return [{ name: MODEL_ENDPOINT_NAME, target: { host: parsed.hostname, port: Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80)) } }];
}

/**
 * How a CLI harness reaches its model: every provider's wire protocol at the run's model endpoint as seen from inside
 * the sandbox, with a per-execution token as the CLI's API key. Provider keys are never handed to a run; the model
 * endpoint (the platform's model proxy) is what holds them.
 */
export function modelAccessFor(harness: string, config: Record<string, unknown>, sandbox: RunSandbox, endpoints: SandboxEndpoint[]): ModelAccess | undefined {
  if (!endpoints.some((e) => e.name === MODEL_ENDPOINT_NAME)) return undefined;
  const base = sandbox.endpointUrl(MODEL_ENDPOINT_NAME);
  const settings = (config.harness ?? {}) as { model_id?: unknown; reasoning_level?: unknown };
  const model = typeof settings.model_id === 'string' && settings.model_id ? settings.model_id : (DEFAULT_MODELS[harness] ?? '');
  return {
    baseUrls: { anthropic: base, openai: `${base}/v1`, gemini: base },
    token: `cvr_${randomBytes(24).toString('base64url')}`,
    model,
    ...(typeof settings.reasoning_level === 'string' ? { reasoningLevel: settings.reasoning_level } : {}),
  };
}
