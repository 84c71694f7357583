import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { apiCall, chartDefaultImage } from '@conveyor/testing';
import { printJson, progress } from './bench-platform';
import { PlatformHealth } from './platform-health';
import { PodWatch } from './pod-watch';
import {
  Child,
  deliverWebhook,
  environment,
  sleep,
  summary,
  webhookAutomation,
  type ApiTarget,
} from './time-to-agent-common';

/**
 * Time to agent on the test cluster (issue #36): the platform as installed by scripts/kubernetes (k8s/chart with
 * k8s/values/kubernetes-test.yaml), every run a Pod running the real Claude Code CLI against the scripted model
 * server on the host. Per run, each phase in ms after the request: the runner's start of the execution, the run's Pod created, scheduled, its container
 * started (all three as this process's watch of the Pods saw them), the sandbox ready (the Pod running, its snapshot
 * restored), the workspace ready, the environment ready, the CLI exec'd, its first model request. Run it with
 * `bash scripts/kubernetes/bench.sh` (brings the cluster up, runs this, tears it down).
 */

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const SETUP_RUNS = Number(process.env.BENCH_SETUP_RUNS ?? 6);
const WEBHOOK_RUNS = Number(process.env.BENCH_WEBHOOK_RUNS ?? 5);
const SETUP_SECONDS = Number(process.env.BENCH_SETUP_SECONDS ?? 20);
const RESTORE_MB = Number(process.env.BENCH_RESTORE_MB ?? 500);
const RESTORE_RUNS = Number(process.env.BENCH_RESTORE_RUNS ?? 3);
const BURST = Number(process.env.BENCH_BURST ?? 20);
/** Also restore the RESTORE_MB workspace streamed through exec, as before the store was a claim (1) or not (0). */
const RESTORE_STREAMED = process.env.BENCH_RESTORE_STREAMED !== '0';
/**
 * `floor:ceiling` of each runner replica's warm Pod pool the bench measures (a), (b) and (c) again with; '' leaves that
 * pass out. 1:1 by default: the test overlay's two replicas then hold two Pods of 500m and 4 GiB, and the node (2 cores)
 * fits three at a time — 2:3 never filled.
 */
const WARM_PODS = process.env.BENCH_WARM_PODS ?? '1:1';
/**
 * The warm pass again with each run Pod's CPU limit raised to this (SANDBOX_K8S_CPU_LIMIT; its request stays the
 * overlay's 500m), so a Pod may burst while the node has CPU to spare; '' leaves that pass out.
 */
const CPU_LIMIT = process.env.BENCH_CPU_LIMIT ?? '2';
const RESULTS_DIR = path.resolve(__dirname, '../results', new Date().toISOString().slice(0, 10));
const MODEL = 'claude-sonnet-4-5';
const RUN_TIMEOUT_MS = 300_000;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];
const RUNNER = 'deployment/conveyor-runner';
const RUNNER_PODS = 'app.kubernetes.io/name=conveyor-runner';

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this with bash scripts/kubernetes/bench.sh`);
  return value;
}

const cluster = {
  apiUrl: `${setting('CONVEYOR_K8S_GATEWAY_URL')}/v1`,
  apiKey: setting('CONVEYOR_K8S_API_KEY'),
  ingressUrl: setting('CONVEYOR_K8S_INGRESS_URL'),
  namespace: setting('CONVEYOR_K8S_NAMESPACE'),
  nodeIp: setting('CONVEYOR_K8S_NODE_IP'),
  modelServerPort: setting('CONVEYOR_K8S_MODEL_SERVER_PORT'),
};

const run = promisify(execFile);
const kubectl = async (...args: string[]): Promise<string> =>
  (
    await run(process.env.KUBECTL ?? 'kubectl', ['-n', cluster.namespace, ...args], {
      maxBuffer: 256 * 1024 * 1024,
    })
  ).stdout;

/** The prefix of a run's Pod names (services/runner/src/sandbox/kubernetes). */
const podPrefix = (runId: string) =>
  `run-${runId
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '')
    .slice(0, 40)}-`;

interface LogLine {
  /** The line as logged: the run's ID is in it (as `runId`, or in a child logger's bindings). */
  raw: string;
  msg?: string;
  phases?: Record<string, number>;
  startedAt?: number;
  ms?: number;
  bytes?: number;
  startedFrom?: string;
  mounted?: boolean;
  /** `run pod started`: whether the run took a warm Pod. */
  warm?: boolean;
}

interface Sample {
  run_id: string;
  state: string;
  to_first_model_request_ms: number;
  to_terminal_ms: number;
  /** Each phase in ms after the request (see the file's comment); absent when not reached or not seen. */
  phases: Record<string, number>;
  /** The runner's log of the snapshot restore: its duration and the archive's bytes. */
  snapshot_restore: { ms: number; bytes: number; from: string; mounted: boolean } | null;
  /** The run took a started Pod from the warm pool (services/runner/src/sandbox/kubernetes/warm-pods.ts). */
  warm_pod: boolean;
  timeline: Array<{ kind: string; at_ms: number; data: unknown }>;
}

class ClusterBench {
  private logs: LogLine[] = [];

  constructor(
    private readonly api: ApiTarget,
    private readonly model: Child,
    private readonly load: Child,
    private readonly watch: PodWatch,
  ) {}

  /** The runner pods' JSON log lines (all of them: the runner logs little at info). */
  async refreshLogs(): Promise<void> {
    // Every replica's log (the test overlay runs two): `logs deployment/…` would read one pod's.
    const text = await kubectl(
      'logs',
      '-l',
      RUNNER_PODS,
      '--tail=-1',
      '--all-containers',
      '--max-log-requests=10',
    );
    this.logs = text.split('\n').flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        return [{ ...(JSON.parse(line) as Omit<LogLine, 'raw'>), raw: line }];
      } catch {
        return [];
      }
    });
  }

  /** The first model request after `after`; a run that never makes one is explained by its state and runner log. */
  private async firstModelRequest(runId: string, after: number): Promise<number> {
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const { at } = await this.model.ask<{ at: number | null }>({ after });
      if (at !== null) return at;
      await sleep(20);
    }
    const run = await apiCall(this.api, 'GET', `/agent/runs/${runId}`).catch((err: Error) => ({
      body: err.message,
    }));
    await this.refreshLogs();
    const lines = this.logs.filter((l) => l.raw.includes(runId)).map((l) => l.raw.slice(0, 400));
    throw new Error(
      `run ${runId}: no model request within ${RUN_TIMEOUT_MS} ms; the run: ${JSON.stringify(run.body).slice(0, 600)}; ` +
        `the runner's last lines of it: ${lines.slice(-8).join(' | ') || 'none'}`,
    );
  }

  private async terminal(runId: string): Promise<{ state: string; at: number }> {
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const got = await apiCall(this.api, 'GET', `/agent/runs/${runId}`);
      const state = String(got.body.state);
      if (TERMINAL.includes(state)) return { state, at: Date.now() };
      await sleep(100);
    }
    throw new Error(`run ${runId} did not end`);
  }

  /** Everything known of one run, the first model request given (it is matched by time only one run at a time). */
  async sample(runId: string, sentAt: number, firstModelAt: number | null): Promise<Sample> {
    const end = await this.terminal(runId);
    let trace: LogLine | undefined;
    for (let i = 0; !trace && i < 20; i++) {
      await this.refreshLogs();
      trace = this.logs.find((l) => l.raw.includes(runId) && l.phases && l.startedAt);
      if (!trace) await sleep(250);
    }
    const restore = this.logs.find((l) => l.raw.includes(runId) && l.msg === 'snapshot restore');
    const started = this.logs.find((l) => l.raw.includes(runId) && l.msg === 'run pod started');
    const pod = this.watch.seen(podPrefix(runId));
    const phases: Record<string, number> = {};
    if (trace?.startedAt) {
      phases.runner_start = trace.startedAt - sentAt;
      for (const [name, ms] of Object.entries(trace.phases ?? {}))
        phases[name] = Math.round(trace.startedAt - sentAt + ms);
    }
    for (const [name, at] of Object.entries(pod ?? {})) phases[name] = at - sentAt;
    if (firstModelAt !== null) phases.first_model_request = firstModelAt - sentAt;
    const timeline = await apiCall(this.api, 'GET', `/agent/runs/${runId}/timeline`);
    const events = (timeline.body.events ?? []) as Array<{ kind: string; created_at: string; data: unknown }>;
    return {
      run_id: runId,
      state: end.state,
      to_first_model_request_ms: firstModelAt === null ? -1 : firstModelAt - sentAt,
      to_terminal_ms: end.at - sentAt,
      phases,
      snapshot_restore:
        restore?.ms !== undefined
          ? {
              ms: restore.ms,
              bytes: restore.bytes ?? 0,
              from: restore.startedFrom ?? '',
              mounted: restore.mounted === true,
            }
          : null,
      warm_pod: started?.warm === true,
      timeline: events.map((e) => ({ kind: e.kind, at_ms: Date.parse(e.created_at) - sentAt, data: e.data })),
    };
  }

  private async send(environmentId: string): Promise<{ runId: string; sentAt: number }> {
    const sent = await this.load.ask<{ sentAt: number; status: number; body: Record<string, unknown> }>({
      url: `${this.api.apiUrl}/agent/runs`,
      headers: { authorization: `Bearer ${this.api.apiKey}`, 'content-type': 'application/json' },
      body: { prompt: 'Say hello.', config: { environment_id: environmentId, harness: { model_id: MODEL } } },
    });
    if (sent.status !== 200) throw new Error(`create: ${sent.status} ${JSON.stringify(sent.body)}`);
    return { runId: String(sent.body.run_id), sentAt: sent.sentAt };
  }

  async createRun(environmentId: string): Promise<Sample> {
    const { runId, sentAt } = await this.send(environmentId);
    return this.sample(runId, sentAt, await this.firstModelRequest(runId, sentAt));
  }

  async deliverWebhook(
    url: string,
    secret: string,
    automationId: string,
    seen: Set<string>,
  ): Promise<Sample> {
    const { runId, sentAt } = await deliverWebhook(this.load, this.api, {
      url,
      secret,
      automationId,
      seen,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    return this.sample(runId, sentAt, await this.firstModelRequest(runId, sentAt));
  }

  /**
   * `count` runs created at once; the model server cannot tell whose turn a request is, so the result is the k-th
   * first model request after the burst was sent, for every k (each run takes one turn), and each run's own phases.
   */
  async burst(environmentId: string, count: number): Promise<Record<string, unknown>> {
    const startedAt = Date.now();
    const sent = await Promise.all(Array.from({ length: count }, () => this.send(environmentId)));
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    let arrivals: number[] = [];
    while (Date.now() < deadline && arrivals.length < count) {
      arrivals = (await this.model.ask<{ all: number[] }>({ after: startedAt, all: true })).all;
      await sleep(100);
    }
    const samples = await Promise.all(sent.map((s) => this.sample(s.runId, s.sentAt, null)));
    const lastSent = Math.max(...sent.map((s) => s.sentAt));
    return {
      name: `(d) ${count} runs created at once (environment without setup)`,
      reached_first_model_request: arrivals.length,
      sent_within_ms: lastSent - startedAt,
      to_first_model_request: summary(arrivals.map((at) => at - startedAt)),
      states: countBy(samples.map((s) => s.state)),
      phases: phaseSummary(samples),
      samples,
    };
  }
}

const countBy = (values: string[]) =>
  values.reduce<Record<string, number>>((acc, v) => ({ ...acc, [v]: (acc[v] ?? 0) + 1 }), {});

/** Per-phase p50/p99 (ms after the request) over the samples. */
function phaseSummary(samples: Sample[]): Record<string, unknown> {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.phases)))];
  names.sort(
    (a, b) =>
      (summary(samples.flatMap((s) => s.phases[a] ?? [])).p50_ms ?? 0) -
      (summary(samples.flatMap((s) => s.phases[b] ?? [])).p50_ms ?? 0),
  );
  return Object.fromEntries(names.map((n) => [n, summary(samples.flatMap((s) => s.phases[n] ?? []))]));
}

const caseResult = (name: string, samples: Sample[]) => ({
  name,
  to_first_model_request: summary(samples.map((s) => s.to_first_model_request_ms)),
  to_terminal: summary(samples.map((s) => s.to_terminal_ms)),
  phases: phaseSummary(samples),
  snapshot_restore: summary(samples.flatMap((s) => s.snapshot_restore?.ms ?? [])),
  samples,
});

/** Kubernetes quantities: CPU in millicores (`2`, `500m`), memory in MiB (`16Gi`, `1024Mi`, `123456Ki`, bytes). */
const millicores = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000));
const UNITS: Record<string, number> = { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024 };
const mebibytes = (q: string) => {
  const unit = UNITS[q.slice(-2)];
  return unit ? Number(q.slice(0, -2)) * unit : Number(q) / 1024 / 1024;
};

/** The node's allocatable CPU (millicores) and memory (MiB), and what is left of them after every Pod's requests. */
async function nodeRoom(): Promise<Record<string, number>> {
  const nodes = JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as {
    items: Array<{ status: { allocatable: { cpu: string; memory: string } } }>;
  };
  const pods = JSON.parse(
    await kubectl('get', 'pods', '-A', '--field-selector=status.phase=Running', '-o', 'json'),
  ) as {
    items: Array<{
      spec: { containers: Array<{ resources?: { requests?: { cpu?: string; memory?: string } } }> };
    }>;
  };
  const containers = pods.items.flatMap((p) => p.spec.containers);
  const { cpu, memory } = nodes.items[0]!.status.allocatable;
  return {
    cpu_millicores: millicores(cpu),
    free_cpu_millicores:
      millicores(cpu) - containers.reduce((sum, c) => sum + millicores(c.resources?.requests?.cpu ?? '0'), 0),
    memory_mib: Math.floor(mebibytes(memory)),
    free_memory_mib: Math.floor(
      mebibytes(memory) -
        containers.reduce((sum, c) => sum + mebibytes(c.resources?.requests?.memory ?? '0'), 0),
    ),
  };
}

/** Warm Pods as the API reports them (label conveyor.dev/warm-pod). */
async function warmPods(state: 'ready' | 'claimed'): Promise<Array<{ uid: string; running: boolean }>> {
  const list = JSON.parse(
    await kubectl('get', 'pods', '-l', `conveyor.dev/warm-pod=${state}`, '-o', 'json'),
  ) as {
    items: Array<{ metadata: { uid: string; deletionTimestamp?: string }; status: { phase?: string } }>;
  };
  return list.items
    .filter((pod) => !pod.metadata.deletionTimestamp)
    .map((pod) => ({ uid: pod.metadata.uid, running: pod.status.phase === 'Running' }));
}

/** Waits until the pool holds its floor of Running, unclaimed Pods (each replica its own), so each run meets a full pool. */
async function warmPoolFull(): Promise<void> {
  const [floor] = WARM_PODS.split(':').map(Number);
  const replicas = Number(await kubectl('get', RUNNER, '-o', 'jsonpath={.spec.replicas}'));
  for (let i = 0; i < 600; i++) {
    if ((await warmPods('ready')).filter((p) => p.running).length >= floor! * replicas) return;
    await sleep(100);
  }
  const seen = await kubectl('get', 'pods', '-l', 'conveyor.dev/warm-pod', '-o', 'wide');
  const said = await kubectl('logs', '-l', RUNNER_PODS, '--tail=-1', '--max-log-requests=10');
  const why = said
    .split('\n')
    .filter((line) => line.includes('warm'))
    .slice(-5);
  throw new Error(`the warm Pod pool did not fill within a minute:\n${seen}\n${why.join('\n')}`);
}

/**
 * What an unclaimed warm Pod costs while it waits, read from the node's cgroups (the node is this machine): memory in
 * use (cgroup v2 memory.current; v1 memory.usage_in_bytes, page cache included, and the RSS of memory.stat) and CPU
 * used over 10 s (v2 cpu.stat usage_usec; v1 cpuacct.usage). Its requests are held on the node regardless.
 */
async function warmPodIdleCost(): Promise<Record<string, unknown>> {
  await warmPoolFull();
  const pods = await warmPods('ready');
  // Every controller's directory of each Pod: cgroupfs names it pod<uid>, the systemd driver *pod<uid_>.slice.
  const dirs = await Promise.all(
    pods.map(async ({ uid }) => {
      const found = await run('find', [
        '/sys/fs/cgroup',
        '-maxdepth',
        '6',
        '-type',
        'd',
        '(',
        '-name',
        `*pod${uid.replace(/-/g, '_')}.slice`,
        '-o',
        '-name',
        `pod${uid}`,
        ')',
      ]).catch(() => ({ stdout: '' }));
      return found.stdout.trim().split('\n').filter(Boolean);
    }),
  );
  const text = (file: string) => readFile(file, 'utf8').catch(() => '');
  const read = async (podDirs: string[]) => {
    const v1Memory = podDirs.find((d) => d.startsWith('/sys/fs/cgroup/memory/'));
    const v1Cpu = podDirs.find((d) => d.includes('cpuacct'));
    const v2 = podDirs[0] ?? '';
    if (v1Memory && v1Cpu) {
      const stat = await text(path.join(v1Memory, 'memory.stat'));
      return {
        memory: Number(await text(path.join(v1Memory, 'memory.usage_in_bytes'))),
        rss: Number(/^total_rss (\d+)/m.exec(stat)?.[1] ?? 0),
        cpuUsec: Number(await text(path.join(v1Cpu, 'cpuacct.usage'))) / 1000,
      };
    }
    return {
      memory: Number(await text(path.join(v2, 'memory.current'))),
      rss: Number(/^anon (\d+)/m.exec(await text(path.join(v2, 'memory.stat')))?.[1] ?? 0),
      cpuUsec: Number(/usage_usec (\d+)/.exec(await text(path.join(v2, 'cpu.stat')))?.[1] ?? 0),
    };
  };
  const found = dirs.filter((d) => d.length > 0);
  if (found.length === 0) return { error: 'no cgroup of a warm Pod found under /sys/fs/cgroup' };
  const before = await Promise.all(found.map(read));
  await sleep(10_000);
  const after = await Promise.all(found.map(read));
  return {
    pods: found.length,
    memory_bytes: after.map((a) => a.memory),
    rss_bytes: after.map((a) => a.rss),
    cpu_millicores_over_10s: after.map((a, i) => Math.round((a.cpuUsec - before[i]!.cpuUsec) / 10_000)),
    cgroups: found[0],
  };
}

/** Sets the runner's settings and waits until its new pod serves. */
async function setRunner(env: Record<string, string>): Promise<void> {
  await kubectl('set', 'env', RUNNER, ...Object.entries(env).map(([k, v]) => `${k}=${v}`));
  await kubectl('rollout', 'status', RUNNER, '--timeout=300s');
  // The old runner pod claims runs until it is gone (one of the first measured burst's runs ended with it).
  for (;;) {
    const [names, replicas] = await Promise.all([
      kubectl('get', 'pods', '-l', RUNNER_PODS, '-o', 'name'),
      kubectl('get', RUNNER, '-o', 'jsonpath={.spec.replicas}'),
    ]);
    if (names.trim().split('\n').length === Number(replicas)) return;
    await sleep(500);
  }
}

async function main(): Promise<void> {
  const modelEnv = {
    ...process.env,
    MODEL_SERVER_HOST: cluster.nodeIp,
    MODEL_SERVER_PORT: cluster.modelServerPort,
  };
  const model = new Child(
    spawn(process.execPath, [path.join(__dirname, 'time-to-agent-model.js')], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: modelEnv,
    }),
  );
  const load = Child.fork('time-to-agent-load.js');
  await model.ready;
  const watch = await PodWatch.start(
    process.env.KUBECTL ?? 'kubectl',
    cluster.namespace,
    'conveyor.dev/run-sandbox',
  );
  const loadBefore = os.loadavg();
  // The machine is shared: the 1-minute load average every 10 s while the bench runs, so a result says its load.
  const loadDuring: number[] = [];
  const loadSampler = setInterval(() => loadDuring.push(os.loadavg()[0]!), 10_000);
  try {
    const secret = await apiCall(cluster, 'PUT', '/secrets/ANTHROPIC_API_KEY', {
      value: `sk-bench-${randomUUID()}`,
    });
    if (secret.status !== 200) throw new Error(`secret: ${secret.status}`);
    const bench = new ClusterBench(cluster, model, load, watch);
    const bare = await environment(cluster, 'tta no setup', []);
    progress('warm-up run…');
    await bench.createRun(bare);
    const noSetup: Sample[] = [];
    for (let i = 0; i < RUNS; i++) {
      noSetup.push(await bench.createRun(bare));
      progress(`(a) no setup ${i + 1}/${RUNS}: ${noSetup[i]!.to_first_model_request_ms} ms`);
    }
    const slow = await environment(cluster, `tta setup ${SETUP_SECONDS}s`, [`sleep ${SETUP_SECONDS}`]);
    const withSetup: Sample[] = [];
    for (let i = 0; i < SETUP_RUNS; i++) {
      withSetup.push(await bench.createRun(slow));
      progress(`(b) setup ${i + 1}/${SETUP_RUNS}: ${withSetup[i]!.to_first_model_request_ms} ms`);
    }
    // A failure to set the webhook up is recorded, not fatal: the other cases still measure.
    const hooks: Sample[] = [];
    let webhookError: string | undefined;
    try {
      const { webhook, automationId } = await webhookAutomation(cluster, bare, MODEL);
      // The ingress URL names the in-cluster Service; this process reaches the same Service by its address.
      const hookUrl = `${cluster.ingressUrl}${new URL(webhook.ingress_url).pathname}`;
      const seen = new Set<string>();
      for (let i = 0; i < WEBHOOK_RUNS; i++) {
        hooks.push(await bench.deliverWebhook(hookUrl, webhook.secret, automationId, seen));
        progress(`(c) webhook ${i + 1}/${WEBHOOK_RUNS}: ${hooks[i]!.to_first_model_request_ms} ms`);
      }
    } catch (err) {
      webhookError = (err as Error).message;
      progress(`(c) webhook: ${webhookError}`);
    }
    // A workspace of RESTORE_MB (incompressible bytes: the archive is not compressed anyway), set up once, then
    // restored into each later run's Pod; BENCH_RESTORE_MB=0 leaves the case out.
    const big =
      RESTORE_MB > 0 &&
      (await environment(cluster, `tta ${RESTORE_MB} MB workspace`, [
        `head -c ${RESTORE_MB * 1024 * 1024} /dev/urandom > blob`,
      ]));
    const restores: Sample[] = [];
    // A failed restore is recorded, not fatal, like the webhook case: the other cases' samples are still written.
    let restoreError: string | undefined;
    try {
      for (let i = 0; big && i < RESTORE_RUNS + 1; i++) {
        restores.push(await bench.createRun(big));
        progress(
          `(e) ${RESTORE_MB} MB workspace ${i + 1}/${RESTORE_RUNS + 1}: ${restores[i]!.to_first_model_request_ms} ms, restore ${restores[i]!.snapshot_restore?.ms ?? '-'} ms`,
        );
      }
    } catch (err) {
      restoreError = (err as Error).message;
      progress(`(e) ${RESTORE_MB} MB workspace: ${restoreError}`);
    }
    // The same snapshot, streamed: the runner without its claim setting (SANDBOX_K8S_SNAPSHOT_CLAIM) finds it in the
    // same store and sends it through exec, as every restore did before issue #36; then the setting back.
    const streamed: Sample[] = [];
    if (big && RESTORE_STREAMED && !restoreError) {
      const claim = await kubectl(
        'get',
        RUNNER,
        '-o',
        'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="SANDBOX_K8S_SNAPSHOT_CLAIM")].value}',
      );
      await setRunner({ SANDBOX_K8S_SNAPSHOT_CLAIM: '' });
      for (let i = 0; i < RESTORE_RUNS; i++) {
        streamed.push(await bench.createRun(big));
        progress(
          `(e) streamed ${i + 1}/${RESTORE_RUNS}: ${streamed[i]!.to_first_model_request_ms} ms, restore ${streamed[i]!.snapshot_restore?.ms ?? '-'} ms`,
        );
      }
      await setRunner({ SANDBOX_K8S_SNAPSHOT_CLAIM: claim });
    }
    // (a), (b) later and (c) again with warm Pods: the runner restarted with a pool of the runs' image, then each case
    // once the pool is full (every warm Pod Running). Its idle cost is read from the node's cgroups meanwhile.
    let warm: Record<string, unknown> | undefined;
    let warmBurst: Record<string, unknown> | undefined;
    if (WARM_PODS) {
      const pool = `${await chartDefaultImage(kubectl)}=${WARM_PODS}`;
      const warmPass = async (label: string, env: Record<string, string>) => {
        progress(`warm pods${label}: the runner restarted with ${JSON.stringify(env)}…`);
        await setRunner(env);
        const idle = await warmPodIdleCost();
        const passes = { no_setup: [] as Sample[], setup_later: [] as Sample[], webhook: [] as Sample[] };
        for (let i = 0; i < RUNS; i++) {
          await warmPoolFull();
          passes.no_setup.push(await bench.createRun(bare));
          progress(`(a) warm${label} ${i + 1}/${RUNS}: ${passes.no_setup[i]!.to_first_model_request_ms} ms`);
        }
        for (let i = 0; i < Math.max(1, SETUP_RUNS - 1); i++) {
          await warmPoolFull();
          passes.setup_later.push(await bench.createRun(slow));
          progress(`(b) warm${label} ${i + 1}: ${passes.setup_later[i]!.to_first_model_request_ms} ms`);
        }
        try {
          const { webhook, automationId } = await webhookAutomation(cluster, bare, MODEL);
          const hookUrl = `${cluster.ingressUrl}${new URL(webhook.ingress_url).pathname}`;
          const seen = new Set<string>();
          for (let i = 0; i < WEBHOOK_RUNS; i++) {
            await warmPoolFull();
            passes.webhook.push(await bench.deliverWebhook(hookUrl, webhook.secret, automationId, seen));
            progress(
              `(c) warm${label} ${i + 1}/${WEBHOOK_RUNS}: ${passes.webhook[i]!.to_first_model_request_ms} ms`,
            );
          }
        } catch (err) {
          progress(`(c) warm${label} webhook: ${(err as Error).message}`);
        }
        return {
          pool,
          settings: env,
          idle_cost: idle,
          no_setup: caseResult(`(a) with warm Pods${label}`, passes.no_setup),
          setup_later: caseResult(
            `(b) later runs with warm Pods${label} (the snapshot streamed in)`,
            passes.setup_later,
          ),
          webhook: caseResult(`(c) webhook with warm Pods${label}`, passes.webhook),
        };
      };
      warm = await warmPass('', { SANDBOX_K8S_WARM_PODS: pool });
      if (CPU_LIMIT) {
        warmBurst = await warmPass(`, CPU limit ${CPU_LIMIT}`, {
          SANDBOX_K8S_WARM_PODS: pool,
          SANDBOX_K8S_CPU_LIMIT: CPU_LIMIT,
        });
      }
      await setRunner({ SANDBOX_K8S_WARM_PODS: '', SANDBOX_K8S_CPU_LIMIT: '' });
    }
    // Many at once: the runner takes them all (RUNNER_CONCURRENCY) and each Pod's CPU is cut so that all fit on the
    // node; the runner restarts with those settings. BENCH_BURST=0 leaves the case out (and the runner as deployed).
    const room = await nodeRoom();
    const burstSettings = {
      RUNNER_CONCURRENCY: String(BURST),
      SANDBOX_K8S_CPU: process.env.BENCH_BURST_CPU ?? `${Math.floor(room.free_cpu_millicores! / BURST)}m`,
      RUN_MEMORY_MB: String(Math.min(4096, Math.floor(room.free_memory_mib! / BURST))),
      RUN_DISK_MB: '2048',
      // Each Pod may burst above its share while the node has idle CPU (issue #36: 20 at once with the limit on).
      SANDBOX_K8S_CPU_LIMIT: CPU_LIMIT,
    };
    let burst: Record<string, unknown> | undefined;
    if (BURST > 0) {
      progress(`(d) ${BURST} at once: the runner restarted with ${JSON.stringify(burstSettings)}…`);
      // Recorded, not fatal, like the webhook: a burst that loses the gateway (2026-11-28, 20 Pods allowed to burst to
      // 2 CPUs each at load ~70) must not cost the sequential cases measured before it.
      const health = PlatformHealth.start(kubectl);
      try {
        await setRunner(burstSettings);
        burst = await bench.burst(bare, BURST);
        progress(`(d) ${BURST} at once: ${JSON.stringify(burst.to_first_model_request)}`);
      } catch (err) {
        burst = { error: (err as Error).message };
        progress(`(d) ${BURST} at once: ${burst.error as string}`);
      }
      // The platform's Pods through the burst: the evidence for what a failed burst lost (and that a passing one lost nothing).
      burst.platform = await health.stop();
      progress(`(d) the platform through the burst: ${JSON.stringify(burst.platform)}`);
    }
    const result = {
      benchmark: 'time-to-agent-kubernetes',
      sandbox: 'kubernetes (single-node test cluster, scripts/kubernetes)',
      run_pods: {
        sequential_cases: 'the settings of k8s/values/kubernetes-test.yaml',
        burst: burst ? burstSettings : null,
        node: room,
      },
      load_average: {
        before: loadBefore,
        during_1m: {
          min: Math.min(...loadDuring),
          p50: [...loadDuring].sort((a, b) => a - b)[Math.floor(loadDuring.length / 2)],
          max: Math.max(...loadDuring),
        },
        after: os.loadavg(),
      },
      cases: {
        no_setup: caseResult('(a) create → first model request, environment without setup', noSetup),
        setup_cold: caseResult(
          `(b) the first run of an environment whose setup sleeps ${SETUP_SECONDS} s`,
          withSetup.slice(0, 1),
        ),
        setup_later: caseResult('(b) later runs of that environment (from its snapshot)', withSetup.slice(1)),
        webhook: {
          ...caseResult('(c) webhook delivery → first model request (environment without setup)', hooks),
          ...(webhookError ? { error: webhookError } : {}),
        },
        restore_cold: caseResult(`(e) a ${RESTORE_MB} MB workspace, its first run`, restores.slice(0, 1)),
        restore: {
          ...caseResult(`(e) later runs of the ${RESTORE_MB} MB workspace (restored)`, restores.slice(1)),
          ...(restoreError ? { error: restoreError } : {}),
        },
        restore_streamed: caseResult(
          `(e) the same snapshot restored through the exec stream (no SANDBOX_K8S_SNAPSHOT_CLAIM)`,
          streamed,
        ),
        ...(warm ? { warm } : {}),
        ...(warmBurst ? { warm_cpu_limit: warmBurst } : {}),
        ...(burst ? { burst } : {}),
      },
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    const file = path.join(
      RESULTS_DIR,
      `time-to-agent-kubernetes-${new Date().toISOString().slice(11, 19).replace(/:/g, '')}.json`,
    );
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    progress(`written to ${file}`);
    printJson(result);
  } finally {
    clearInterval(loadSampler);
    watch.stop();
    model.process.disconnect();
    load.process.disconnect();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
