import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once against a service's schema and fails listing every problem, not just the first. */
export function loadConfig<S extends z.ZodTypeAny>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return result.data;
}

const SECRET_KEY = /(secret|password|token|key)/i;

/** A loggable copy of a config with secrets and credentials in URLs removed. */
export function redactConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    if (SECRET_KEY.test(k)) out[k] = '[redacted]';
    else if (typeof v === 'string' && /^[a-z]+:\/\/[^/]*:[^@/]*@/i.test(v))
      out[k] = v.replace(/\/\/([^:/]*):[^@/]*@/, '//$1:***@');
    else out[k] = v;
  }
  return out;
}
