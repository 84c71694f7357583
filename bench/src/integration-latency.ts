import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RunningPlatform } from '@conveyor/testing';
import { progress } from './bench-platform';

/**
 * The integration benchmarks' scaffolding (github-app, slack-app, linear): trials one after another, each a signed
 * request sent by the load generator's process and timed to the milestones the provider (or the API) shows, and in
 * the same run, interleaved with them, a baseline of runs created through the API timed to the same stages. Every
 * milestone is reported with its ratio to the baseline stage it corresponds to, so results from different machines
 * (and loads) compare: the ratio is what the integration's path (ingress, Kafka, the delivery consumer, the provider
 * calls) adds to a run's own.
 */
export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SentAnswer {
  status: number;
  text: string;
}

/** The baseline's stages: the API's answer (the run is queued), a runner working on it, the run ended. */
export type BaselineStage = 'answered' | 'in_progress' | 'ended';

export interface Milestone {
  name: string;
  /** The baseline stage it is compared with. */
  baseline: BaselineStage;
  reached(): boolean | Promise<boolean>;
}

export interface Trial {
  request: SignedRequest;
  /** The status the ingress (or the API) answers when it takes the request. */
  expectStatus: number;
  /** In the order they happen. */
  milestones: Milestone[];
}

const MILESTONE_TIMEOUT_MS = 120_000;
const POLL_MS = 5;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];

/** The load generator's process (delivery-sender.ts): `send` resolves with the answer to that one request. */
function startSender(): { send(request: SignedRequest): Promise<SentAnswer>; stop(): void } {
  const child = fork(path.join(__dirname, 'delivery-sender.js'));
  const waiting = new Map<number, (answer: SentAnswer) => void>();
  let next = 0;
  child.on('message', (m: { id: number; answer: SentAnswer }) => waiting.get(m.id)?.(m.answer));
  return {
    send: (request) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, (answer) => {
          waiting.delete(id);
          resolve(answer);
        });
        child.send({ id, request });
      }),
    stop: () => child.kill(),
  };
}

async function apiGet(platform: RunningPlatform, route: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${platform.apiUrl}${route}`, {
    headers: { Authorization: `Bearer ${platform.apiKey}` },
  });
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The run's state through the API (`GET /agent/runs/{id}`). */
export async function runState(platform: RunningPlatform, runId: string): Promise<string> {
  return String((await apiGet(platform, `/agent/runs/${runId}`)).state);
}

export const inProgressOrLater = (state: string): boolean =>
  state === 'INPROGRESS' || TERMINAL.includes(state);
const ended = (state: string): boolean => TERMINAL.includes(state);

/** The run a delivery started, from its webhook's delivery log (undefined until the consumer recorded it). */
export async function runOfDelivery(
  platform: RunningPlatform,
  webhook: { factory_id: string; webhook_uid: string },
  deliveryId: string,
): Promise<string | undefined> {
  const log = await apiGet(
    platform,
    `/factories/${webhook.factory_id}/webhooks/${webhook.webhook_uid}/deliveries?limit=200`,
  );
  const entry = (log.deliveries as Array<{ delivery_id: string; run_ids: string[] }>).find(
    (d) => d.delivery_id === deliveryId,
  );
  return entry?.run_ids[0];
}

async function timeTrial(
  send: (request: SignedRequest) => Promise<SentAnswer>,
  trial: Trial,
  label: string,
): Promise<Record<string, number>> {
  const started = performance.now();
  const answer = await send(trial.request);
  if (answer.status !== trial.expectStatus) throw new Error(`${label}: ${answer.status} ${answer.text}`);
  const times: Record<string, number> = { answered: performance.now() - started };
  for (const milestone of trial.milestones) {
    while (!(await milestone.reached())) {
      if (performance.now() - started > MILESTONE_TIMEOUT_MS)
        throw new Error(`${label}: no ${milestone.name} after ${MILESTONE_TIMEOUT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    times[milestone.name] = performance.now() - started;
  }
  return times;
}

/** A run created through the API with `prompt`, timed to a runner working on it and to its end. */
function baselineTrial(platform: RunningPlatform, prompt: string, answer: { runId?: string }): Trial {
  const state = () => runState(platform, answer.runId!);
  return {
    request: {
      url: `${platform.apiUrl}/agent/runs`,
      headers: { Authorization: `Bearer ${platform.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt }),
    },
    expectStatus: 200,
    milestones: [
      { name: 'in_progress', baseline: 'in_progress', reached: async () => inProgressOrLater(await state()) },
      { name: 'ended', baseline: 'ended', reached: async () => ended(await state()) },
    ],
  };
}

const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
  return { p50_ms: at(0.5), p90_ms: at(0.9), max_ms: Math.round(sorted.at(-1)!) };
};

/**
 * Runs `count` trials of `trialAt(i)`, each after a baseline trial (a run through the API, `baselineStages` of it
 * timed), and returns the result object the benchmark prints.
 */
export async function measureIntegration(options: {
  benchmark: string;
  platform: RunningPlatform;
  count: number;
  baselineStages: BaselineStage[];
  trialAt(i: number): Trial;
}): Promise<Record<string, unknown>> {
  const { platform, count } = options;
  const sender = startSender();
  const samples = new Map<string, number[]>();
  const record = (prefix: string, times: Record<string, number>) => {
    for (const [name, ms] of Object.entries(times))
      samples.set(`${prefix}${name}`, [...(samples.get(`${prefix}${name}`) ?? []), ms]);
  };
  const loadBefore = os.loadavg();
  let milestones: Milestone[] = [];
  try {
    for (let i = 1; i <= count; i++) {
      const created: { runId?: string } = {};
      const baseline = baselineTrial(platform, `Bench baseline ${i}`, created);
      const stages = baseline.milestones.filter((m) => options.baselineStages.includes(m.baseline));
      const send = async (request: SignedRequest) => {
        const answer = await sender.send(request);
        if (answer.status === 200) created.runId = (JSON.parse(answer.text) as { run_id: string }).run_id;
        return answer;
      };
      record('baseline.', await timeTrial(send, { ...baseline, milestones: stages }, `baseline ${i}`));
      const trial = options.trialAt(i);
      milestones = trial.milestones;
      const times = await timeTrial(sender.send, trial, `delivery ${i}`);
      record('', times);
      progress(
        `${i}: ${Object.entries(times)
          .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
          .join(', ')}`,
      );
    }
  } finally {
    sender.stop();
  }
  const baseline = Object.fromEntries(
    ['answered', ...options.baselineStages.filter((s) => s !== 'answered')].map((stage) => [
      stage,
      summary(samples.get(`baseline.${stage}`)!),
    ]),
  ) as Record<string, ReturnType<typeof summary>>;
  return {
    benchmark: options.benchmark,
    deliveries: count,
    load_average: {
      before: loadBefore.map((l) => Number(l.toFixed(1))),
      after: os.loadavg().map((l) => Number(l.toFixed(1))),
    },
    baseline,
    milestones: Object.fromEntries(
      [{ name: 'answered', baseline: 'answered' as const }, ...milestones].map((m) => {
        const measured = summary(samples.get(m.name)!);
        const base = baseline[m.baseline]!;
        return [
          m.name,
          {
            ...measured,
            baseline_stage: m.baseline,
            p50_ratio: Number((measured.p50_ms / base.p50_ms).toFixed(2)),
            p90_ratio: Number((measured.p90_ms / base.p90_ms).toFixed(2)),
          },
        ];
      }),
    ),
  };
}
