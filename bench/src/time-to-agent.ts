import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createPrismaClient } from '@conveyor/db';
import { apiCall, startExtraService, type ExtraService, type RunningPlatform } from '@conveyor/testing';
import { cpuMs, printJson, progress, startBenchPlatform } from './bench-platform';
import {
  Child,
  deliverWebhook,
  environment,
  sleep,
  summary,
  webhookAutomation,
} from './time-to-agent-common';

/**
 * Time to agent (issue #26): from a request to the platform to the agent CLI's first model request, with the real
 * Claude Code CLI in the bubblewrap sandbox against a scripted Anthropic model server (its own process, which stamps
 * each request's arrival) and a load generator in its own process (which stamps each request it sends). Runs one
 * after another. BENCH_MODE=orchestrator-cpu measures instead the orchestrator's CPU time per executed run.
 */

const MODE = process.env.BENCH_MODE ?? 'time-to-agent';
const RUNS = Number(process.env.BENCH_RUNS ?? 12);
const SETUP_RUNS = Number(process.env.BENCH_SETUP_RUNS ?? 4);
const WEBHOOK_RUNS = Number(process.env.BENCH_WEBHOOK_RUNS ?? 6);
const SETUP_SECONDS = Number(process.env.BENCH_SETUP_SECONDS ?? 20);
const CPU_RUNS = Number(process.env.BENCH_CPU_RUNS ?? 200);
const IDLE_SECONDS = Number(process.env.BENCH_CPU_IDLE_SECONDS ?? 10);
/** `interleaved`: BENCH_CPU_ROUNDS rounds of one case with tracing off and one with it on (order alternating). */
const CPU_TRACING = process.env.BENCH_CPU_TRACING;
const CPU_ROUNDS = Number(process.env.BENCH_CPU_ROUNDS ?? 3);
const RESULTS_DIR = path.resolve(__dirname, '../results', new Date().toISOString().slice(0, 10));
const MODEL = 'claude-sonnet-4-5';
const RUN_TIMEOUT_MS = 180_000;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];

interface Sent {
  sentAt: number;
  status: number;
  body: Record<string, unknown>;
}

/** One measured run: the request's time, the first model request after it, the run's end, timeline and trace. */
interface Sample {
  run_id: string;
  to_first_model_request_ms: number;
  to_terminal_ms: number;
  state: string;
  /** The runner's phases of this execution (ms after its start), from its log line "run execution finished". */
  runner_phases: Record<string, number> | null;
  /** The runner's start of the execution, relative to the request (queue + claim). */
  request_to_runner_start_ms: number | null;
  /** What the timeline says of a snapshot, if anything (the first event whose data names one). */
  snapshot: unknown;
  timeline: Array<{ kind: string; at_ms: number; data: unknown }>;
}

class Bench {
  constructor(
    private readonly platform: RunningPlatform,
    private readonly runner: ExtraService,
    private readonly model: Child,
    private readonly load: Child,
  ) {}

  private async firstModelRequest(after: number): Promise<number> {
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const { at } = await this.model.ask<{ at: number | null }>({ after });
      if (at !== null) return at;
      await sleep(25);
    }
    throw new Error(`no model request within ${RUN_TIMEOUT_MS} ms\n${this.runner.logs().slice(-4000)}`);
  }

  private async terminal(runId: string): Promise<{ state: string; at: number }> {
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const run = await apiCall(this.platform, 'GET', `/agent/runs/${runId}`);
      const state = String(run.body.state);
      if (TERMINAL.includes(state)) return { state, at: Date.now() };
      await sleep(50);
    }
    throw new Error(`run ${runId} did not end`);
  }

  /** The runner's trace of the run's execution: its `phases` and `startedAt` (epoch ms). */
  private trace(runId: string): { phases: Record<string, number>; startedAt: number } | null {
    for (const line of this.runner.logs().split('\n').reverse()) {
      if (!line.includes(runId) || !line.includes('"phases"')) continue;
      const entry = JSON.parse(line) as { phases?: Record<string, number>; startedAt?: number };
      if (entry.phases && entry.startedAt) return { phases: entry.phases, startedAt: entry.startedAt };
    }
    return null;
  }

  async measure(runId: string, sentAt: number): Promise<Sample> {
    const first = await this.firstModelRequest(sentAt);
    const end = await this.terminal(runId);
    // The runner logs its trace when the execution is reported complete, just after the state changes.
    let trace = this.trace(runId);
    for (let i = 0; !trace && i < 40; i++) await sleep(50).then(() => (trace = this.trace(runId)));
    const timeline = await apiCall(this.platform, 'GET', `/agent/runs/${runId}/timeline`);
    const events = (timeline.body.events ?? []) as Array<{ kind: string; created_at: string; data: unknown }>;
    return {
      run_id: runId,
      to_first_model_request_ms: first - sentAt,
      to_terminal_ms: end.at - sentAt,
      state: end.state,
      runner_phases: trace?.phases ?? null,
      request_to_runner_start_ms: trace ? trace.startedAt - sentAt : null,
      snapshot: events.find((e) => JSON.stringify(e.data ?? {}).includes('snapshot'))?.data ?? null,
      timeline: events.map((e) => ({ kind: e.kind, at_ms: Date.parse(e.created_at) - sentAt, data: e.data })),
    };
  }

  async createRun(environmentId: string): Promise<Sample> {
    const sent = await this.load.ask<Sent>({
      url: `${this.platform.apiUrl}/agent/runs`,
      headers: { authorization: `Bearer ${this.platform.apiKey}`, 'content-type': 'application/json' },
      body: {
        prompt: 'Say hello.',
        config: { environment_id: environmentId, harness: { model_id: MODEL } },
      },
    });
    if (sent.status !== 200) throw new Error(`create: ${sent.status} ${JSON.stringify(sent.body)}`);
    return this.measure(String(sent.body.run_id), sent.sentAt);
  }

  async deliverWebhook(
    url: string,
    secret: string,
    automationId: string,
    seen: Set<string>,
  ): Promise<Sample> {
    const { runId, sentAt } = await deliverWebhook(this.load, this.platform, {
      url,
      secret,
      automationId,
      seen,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    return this.measure(runId, sentAt);
  }
}

/** Per-phase p50/p99 over the samples' runner traces (ms after the execution started). */
function phaseSummary(samples: Sample[]): Record<string, unknown> {
  const names = new Set(samples.flatMap((s) => Object.keys(s.runner_phases ?? {})));
  const out: Record<string, unknown> = {
    request_to_runner_start: summary(samples.flatMap((s) => s.request_to_runner_start_ms ?? [])),
  };
  for (const name of names) out[name] = summary(samples.flatMap((s) => s.runner_phases?.[name] ?? []));
  return out;
}

const caseResult = (name: string, samples: Sample[]) => ({
  name,
  to_first_model_request: summary(samples.map((s) => s.to_first_model_request_ms)),
  to_terminal: summary(samples.map((s) => s.to_terminal_ms)),
  runner_phases: phaseSummary(samples),
  samples,
});

/** Claude Code's native binary, as the runner starts it (services/runner/src/harness/cli/cli-command.ts). */
const claudeBinary = (): string => path.join(path.dirname(claudeManifest()), 'bin/claude.exe');

/**
 * Claude Code alone, started on the host with the runner's arguments straight at the model server: exec → its first
 * model request. Subtracted from a run's time to agent, it leaves the platform's share.
 */
async function hostCli(model: Child, modelUrl: string): Promise<number> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'tta-cli-'));
  try {
    const sentAt = Date.now();
    const cli = spawn(
      claudeBinary(),
      ['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose'].concat([
        '--permission-mode',
        'bypassPermissions',
        '--model',
        MODEL,
        '--session-id',
        randomUUID(),
      ]),
      {
        cwd: home,
        stdio: ['pipe', 'ignore', 'ignore'],
        env: {
          PATH: process.env.PATH,
          HOME: home,
          ANTHROPIC_BASE_URL: modelUrl,
          ANTHROPIC_API_KEY: 'sk-bench',
          CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          IS_SANDBOX: '1',
        },
      },
    );
    cli.stdin!.end(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'Say hello.' } })}\n`);
    const exited = new Promise((resolve) => cli.once('exit', resolve));
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    for (;;) {
      const { at } = await model.ask<{ at: number | null }>({ after: sentAt });
      if (at !== null) {
        await exited;
        return at - sentAt;
      }
      if (Date.now() > deadline) throw new Error('Claude Code on the host made no model request');
      await sleep(10);
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

async function timeToAgent(): Promise<Record<string, unknown>> {
  const model = Child.fork('time-to-agent-model.js');
  const load = Child.fork('time-to-agent-load.js');
  const { url: modelUrl } = (await model.ready) as { url: string };
  progress('starting the platform (bubblewrap sandbox, Claude Code)…');
  const platform = await startBenchPlatform({
    RUN_SANDBOX: 'bubblewrap',
    DEFAULT_HARNESS: 'claude',
    ANTHROPIC_BASE_URL: modelUrl,
    MODELS_CONFIG: JSON.stringify({ models: [{ id: MODEL, provider: 'claude', harnesses: ['claude'] }] }),
  });
  // Its own runner process with LOG_LEVEL=info, whose "run execution finished" lines carry the run's trace.
  const runner = await startExtraService(platform, 'runner', { LOG_LEVEL: 'info' });
  try {
    const secret = await apiCall(platform, 'PUT', '/secrets/ANTHROPIC_API_KEY', {
      value: `sk-bench-${randomUUID()}`,
    });
    if (secret.status !== 200) throw new Error(`secret: ${secret.status}`);
    const bench = new Bench(platform, runner, model, load);
    const bare = await environment(platform, 'no setup', []);
    progress('warm-up run…');
    await bench.createRun(bare);
    // Interleaved, so both see the same load: a run, then the CLI alone on the host.
    const noSetup: Sample[] = [];
    const alone: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      noSetup.push(await bench.createRun(bare));
      alone.push(await hostCli(model, modelUrl));
      progress(
        `(a) no setup ${i + 1}/${RUNS}: ${noSetup[i]!.to_first_model_request_ms} ms (CLI alone ${alone[i]} ms)`,
      );
    }
    const slow = await environment(platform, `setup ${SETUP_SECONDS}s`, [`sleep ${SETUP_SECONDS}`]);
    const withSetup: Sample[] = [];
    for (let i = 0; i < SETUP_RUNS; i++) {
      withSetup.push(await bench.createRun(slow));
      progress(`(b) setup ${i + 1}/${SETUP_RUNS}: ${withSetup[i]!.to_first_model_request_ms} ms`);
    }
    const { webhook, automationId } = await webhookAutomation(platform, bare, MODEL);
    const seen = new Set<string>();
    const hooks: Sample[] = [];
    for (let i = 0; i < WEBHOOK_RUNS; i++) {
      hooks.push(await bench.deliverWebhook(webhook.ingress_url, webhook.secret, automationId, seen));
      progress(`(c) webhook ${i + 1}/${WEBHOOK_RUNS}: ${hooks[i]!.to_first_model_request_ms} ms`);
    }
    return {
      benchmark: 'time-to-agent',
      cli: `claude ${readCliVersion()}`,
      sandbox: 'bubblewrap',
      cli_alone_on_host: {
        name: 'Claude Code started on the host with the same arguments, exec → first model request (interleaved with (a))',
        ...summary(alone),
      },
      // The platform's share: (a) minus the CLI alone, per interleaved pair.
      platform_share: summary(noSetup.map((s, i) => s.to_first_model_request_ms - alone[i]!)),
      cases: {
        no_setup: caseResult('(a) create → first model request, environment without setup', noSetup),
        setup_cold: caseResult(
          `(b) the first run of an environment whose setup sleeps ${SETUP_SECONDS} s`,
          withSetup.slice(0, 1),
        ),
        setup_later: caseResult(`(b) later runs of that environment`, withSetup.slice(1)),
        webhook: caseResult('(c) webhook delivery → first model request (environment without setup)', hooks),
      },
    };
  } finally {
    await runner.stop();
    await platform.stop();
    model.process.disconnect();
    load.process.disconnect();
  }
}

function claudeManifest(): string {
  return require.resolve('@anthropic-ai/claude-code/package.json', {
    paths: [path.resolve(__dirname, '../../services/runner')],
  });
}

function readCliVersion(): string {
  return (JSON.parse(readFileSync(claudeManifest(), 'utf8')) as { version: string }).version;
}

/**
 * CPU_RUNS demo runs (`@demo message`, no sandbox) created while no runner runs, then drained by one runner: the
 * orchestrator's CPU time over the drain divided by the runs is its cost per executed run (claim, events, complete,
 * and whatever else a run makes it do), without the cost of creating them.
 */
async function orchestratorCpu(env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>> {
  progress('starting the platform (no sandbox, demo harness)…');
  const loadBefore = os.loadavg()[0];
  const platform = await startBenchPlatform({ RUN_SANDBOX: 'none', DEFAULT_HARNESS: 'demo', ...env });
  const db = createPrismaClient(platform.databaseUrl);
  let runner: ExtraService | undefined;
  try {
    const orchestratorPid = platform.process('orchestrator')!.pid!;
    const created = cpuMs(orchestratorPid);
    for (let i = 0; i < CPU_RUNS; i++) {
      const run = await apiCall(platform, 'POST', '/agent/runs', { prompt: '@demo message done' });
      if (run.status !== 200) throw new Error(`create: ${run.status} ${JSON.stringify(run.body)}`);
    }
    const createCpu = cpuMs(orchestratorPid) - created;
    await sleep(2000);
    // What the orchestrator spends with nothing to do (its timers, loops and listeners), over IDLE_SECONDS.
    const idleFrom = cpuMs(orchestratorPid);
    await sleep(IDLE_SECONDS * 1000);
    const idleCpu = cpuMs(orchestratorPid) - idleFrom;
    // The profile (BENCH_CPU_PROF_DIR) covers the drain only.
    if (process.env.BENCH_CPU_PROF_DIR) process.kill(orchestratorPid, 'SIGUSR2');
    const before = cpuMs(orchestratorPid);
    const started = Date.now();
    progress(`${CPU_RUNS} runs queued; draining with one runner…`);
    runner = await startExtraService(platform, 'runner');
    for (;;) {
      const done = await db.run.count({ where: { state: { in: ['SUCCEEDED', 'FAILED', 'ERROR'] } } });
      if (done >= CPU_RUNS) break;
      await sleep(100);
    }
    const seconds = (Date.now() - started) / 1000;
    const drainCpu = cpuMs(orchestratorPid) - before;
    const runnerCpu = cpuMs(runner.pid);
    const failed = await db.run.count({ where: { state: { not: 'SUCCEEDED' } } });
    return {
      benchmark: 'orchestrator-cpu-per-run',
      runs: CPU_RUNS,
      not_succeeded: failed,
      drain_seconds: Number(seconds.toFixed(2)),
      runs_per_second: Number((CPU_RUNS / seconds).toFixed(1)),
      orchestrator_cpu_ms_per_executed_run: Number((drainCpu / CPU_RUNS).toFixed(2)),
      orchestrator_cpu_ms_per_created_run: Number((createCpu / CPU_RUNS).toFixed(2)),
      orchestrator_idle_cpu_ms_per_second: Number((idleCpu / IDLE_SECONDS).toFixed(2)),
      // The idle share of the per-run figure: the drain's seconds at the idle rate, per run.
      orchestrator_idle_cpu_ms_per_executed_run: Number(
        (((idleCpu / IDLE_SECONDS) * seconds) / CPU_RUNS).toFixed(2),
      ),
      runner_cpu_ms_per_run_including_start: Number((runnerCpu / CPU_RUNS).toFixed(2)),
      // The figure follows the machine's load (a slower drain makes more batches per run): the 1-minute averages.
      load_average: { before: loadBefore, after: os.loadavg()[0] },
    };
  } finally {
    await runner?.stop();
    await db.$disconnect();
    await platform.stop();
  }
}

/**
 * The orchestrator's CPU per executed run with tracing off and on, interleaved in one run (the machine's load moves
 * both alike): CPU_ROUNDS rounds of both cases, the order alternating, the traces exported over OTLP/HTTP to a sink
 * in this process that answers 200 (the collector's own cost is not the orchestrator's). Ratios are per round.
 */
async function orchestratorCpuTracing(): Promise<Record<string, unknown>> {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const on = {
    OTEL_SDK_DISABLED: 'false',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
  };
  const off = { OTEL_SDK_DISABLED: 'true' };
  const perRun = (r: Record<string, unknown>) => r.orchestrator_cpu_ms_per_executed_run as number;
  const rounds: Array<{ off: Record<string, unknown>; on: Record<string, unknown>; on_off_ratio: number }> =
    [];
  try {
    for (let round = 0; round < CPU_ROUNDS; round++) {
      const first = round % 2 === 0 ? 'off' : 'on';
      progress(`round ${round + 1}/${CPU_ROUNDS}: tracing ${first} first`);
      const a = await orchestratorCpu(first === 'off' ? off : on);
      const b = await orchestratorCpu(first === 'off' ? on : off);
      const [offResult, onResult] = first === 'off' ? [a, b] : [b, a];
      rounds.push({
        off: offResult,
        on: onResult,
        on_off_ratio: Number((perRun(onResult) / perRun(offResult)).toFixed(2)),
      });
    }
  } finally {
    sink.close();
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    const mid = Math.floor(sorted.length / 2);
    const value = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    return Number(value.toFixed(2));
  };
  return {
    benchmark: 'orchestrator-cpu-per-run-tracing',
    runs_per_case: CPU_RUNS,
    median_ms_per_executed_run: {
      off: median(rounds.map((r) => perRun(r.off))),
      on: median(rounds.map((r) => perRun(r.on))),
    },
    median_on_off_ratio: median(rounds.map((r) => r.on_off_ratio)),
    rounds,
  };
}

async function main(): Promise<void> {
  const result =
    MODE !== 'orchestrator-cpu'
      ? await timeToAgent()
      : CPU_TRACING === 'interleaved'
        ? await orchestratorCpuTracing()
        : await orchestratorCpu();
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(
    RESULTS_DIR,
    `${MODE}${CPU_TRACING === 'interleaved' ? '-tracing' : ''}-${new Date().toISOString().slice(11, 19).replace(/:/g, '')}.json`,
  );
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  progress(`written to ${file}`);
  printJson(result);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
