import path from 'node:path';
import { startPlatform, type RunningPlatform } from '@conveyor/testing';

/** Seconds of each measured load run and its connections, shared by the HTTP benchmarks. */
export const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 20);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);

export const progress = (line: string): void => {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
};

/**
 * The platform as processes (no runner: runs stay queued). With BENCH_CPU_PROF_DIR set, every service writes a V8 CPU
 * profile there when it stops (cpu-profile-preload), to read the top self-time functions of the hot path.
 */
export function startBenchPlatform(env: NodeJS.ProcessEnv = {}): Promise<RunningPlatform> {
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  return startPlatform({
    // The measured load is far above an API key's default rate budget.
    env: {
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_KEY_POINTS: '100000000',
      RATE_LIMIT_PER_TEAM_POINTS: '100000000',
      // Tests check every response against the OpenAPI document; production does not, and neither do benchmarks.
      VALIDATE_RESPONSES: 'false',
      ...env,
      ...(profileDir && {
        BENCH_CPU_PROF_DIR: profileDir,
        NODE_OPTIONS: `--require ${path.join(__dirname, 'cpu-profile-preload.js')}`,
      }),
    },
    withRunner: false,
  });
}

export async function apiPost(
  platform: RunningPlatform,
  path: string,
  payload: unknown,
): Promise<Record<string, string>> {
  const res = await fetch(`${platform.apiUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${platform.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

export const printJson = (value: unknown): void => {
  console.log(JSON.stringify(value, null, 2));
};

/** When a measured run saw 5xx answers, the services' own warnings say why (stderr; LOG_LEVEL is warn). */
export function reportServerErrors(
  platform: RunningPlatform,
  results: Array<{ status_codes: Record<string, number> }>,
): void {
  if (results.some((r) => Object.keys(r.status_codes).some((code) => code.startsWith('5')))) {
    progress(`5xx answers were counted; the services' last log lines:\n${platform.logs().slice(-6000)}`);
  }
}
