import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AutocannonTarget, LoadResult } from './autocannon-target';

/**
 * An open-loop load generator in its own process, for latency at a steady rate: one request every 1/rate seconds,
 * sent on schedule whether or not earlier ones were answered. autocannon's rate limit instead lets each connection
 * send its per-second budget back to back at the start of every second, so "100/s" arrives as a burst each second
 * (bench/README.md). Same target description and summary as autocannon-worker.
 */
const target = JSON.parse(process.env.BENCH_TARGET ?? '{}') as AutocannonTarget;
const rate = target.overallRate ?? 100;
const total = Math.round(rate * target.durationSeconds);
const agent = new http.Agent({ keepAlive: true, maxSockets: target.connections });
const url = new URL(target.url);

const latencies: number[] = [];
const codes: Record<string, number> = {};
let errors = 0;

function send(n: number): Promise<void> {
  return new Promise((resolve) => {
    const started = performance.now();
    const headers: Record<string, string> = { ...target.headers };
    if (target.uniqueHeader) headers[target.uniqueHeader.name] = `${target.uniqueHeader.prefix}-${n}`;
    const req = http.request(url, { method: target.method, headers, agent }, (res) => {
      res.resume();
      res.once('end', () => {
        latencies.push(performance.now() - started);
        codes[String(res.statusCode)] = (codes[String(res.statusCode)] ?? 0) + 1;
        resolve();
      });
    });
    req.once('error', () => {
      errors++;
      resolve();
    });
    req.end(target.body);
  });
}

async function main(): Promise<void> {
  const began = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let n = 0; n < total; n++) {
    // Each request has its own slot on the schedule; sleeping to the slot (not by a fixed delay) avoids drift.
    const wait = began + (n * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(send(n));
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - began) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  const ok = codes[String(target.expectStatus)] ?? 0;
  const result: LoadResult = {
    requests: total,
    expected_status: target.expectStatus,
    expected: ok,
    other_status: latencies.length - ok,
    errors,
    timeouts: 0,
    seconds: Number(seconds.toFixed(2)),
    per_second: Number((ok / seconds).toFixed(1)),
    p50_ms: at(0.5),
    p90_ms: at(0.9),
    p99_ms: at(0.99),
    max_ms: Math.round(sorted[sorted.length - 1] ?? 0),
    status_codes: codes,
  };
  console.log(JSON.stringify(result));
  agent.destroy();
}

void main();
