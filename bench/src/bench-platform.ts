import { readdirSync, readFileSync } from 'node:fs';
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
 * The platform as processes (no runner unless asked: runs stay queued). With BENCH_CPU_PROF_DIR set, every service
 * writes a V8 CPU profile there when it stops (cpu-profile-preload), to read the top self-time functions of the hot
 * path.
 */
export function startBenchPlatform(
  env: NodeJS.ProcessEnv = {},
  { withRunner = false } = {},
): Promise<RunningPlatform> {
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
    withRunner,
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

/** The /proc/PID/stat fields after the command name (field 3, the state, is index 0). */
const statFields = (pid: number): string[] => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

/** user + system CPU time of a process so far, in ms (/proc/PID/stat, clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The PostgreSQL server's main process, from one of its backends' (`SELECT pg_backend_pid()`). */
export const postmasterOf = (backendPid: number): number => Number(statFields(backendPid)[1]);

/**
 * CPU time of a PostgreSQL server so far, in ms: the postmaster's own and its exited children's (reaped: cutime and
 * cstime), plus its live backends' and workers'.
 */
export function postgresCpuMs(postmaster: number): number {
  const own = statFields(postmaster);
  let total = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * 10;
  for (const entry of readdirSync('/proc'))
    if (/^\d+$/.test(entry))
      try {
        if (Number(statFields(Number(entry))[1]) === postmaster) total += cpuMs(Number(entry));
      } catch {
        // The process ended between the listing and the read; its time is now in the postmaster's cutime.
      }
  return total;
}
