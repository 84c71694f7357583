import { spawn } from 'node:child_process';
import path from 'node:path';

/** One load run: `connections` closed-loop connections for `durationSeconds` (optionally capped at `overallRate`/s). */
export interface AutocannonTarget {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationSeconds: number;
  overallRate?: number;
  /** The status that counts as success (202 for deliveries, 201 for creates, 200 for reads). */
  expectStatus: number;
  /**
   * Send `overallRate` requests a second evenly spaced, open loop (paced-load-worker), instead of autocannon, whose
   * rate limit sends each second's budget as a burst. For latency at a steady rate.
   */
  paced?: boolean;
  /** A header given a distinct value on every request (`prefix-N`). */
  uniqueHeader?: { name: string; prefix: string };
}

export interface LoadResult {
  requests: number;
  expected_status: number;
  expected: number;
  other_status: number;
  errors: number;
  timeouts: number;
  seconds: number;
  per_second: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  status_codes: Record<string, number>;
}

/** Runs the load generator (autocannon, or the paced one) in a child process and returns its summary. */
export function runAutocannon(target: AutocannonTarget): Promise<LoadResult> {
  const worker = target.paced ? 'paced-load-worker.js' : 'autocannon-worker.js';
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, worker)], {
      env: { ...process.env, BENCH_TARGET: JSON.stringify(target) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      try {
        resolve(JSON.parse(out) as LoadResult);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

/** Throughput and latency of `measured` relative to `baseline`, measured in the same run. */
export function ratios(
  measured: LoadResult,
  baseline: LoadResult,
): { throughput: number; p50: number; p99: number } {
  const r = (a: number, b: number, digits: number) =>
    (b > 0 ? Number((a / b).toFixed(digits)) : null) as number;
  return {
    throughput: r(measured.per_second, baseline.per_second, 3),
    p50: r(measured.p50_ms, baseline.p50_ms, 2),
    p99: r(measured.p99_ms, baseline.p99_ms, 2),
  };
}
