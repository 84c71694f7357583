import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { apiCall } from '@conveyor/testing';

// What the time-to-agent benchmarks share: on one machine (time-to-agent.ts) and on the test cluster
// (kubernetes-time-to-agent.ts).

/** Request/answer over a forked child's IPC channel, matched by id. */
export class Child {
  private next = 0;
  private readonly waiting = new Map<number, (answer: Record<string, unknown>) => void>();
  readonly ready: Promise<Record<string, unknown>>;

  constructor(readonly process: ChildProcess) {
    this.ready = new Promise((resolve) => {
      process.on('message', (m: Record<string, unknown>) => {
        if (typeof m.id !== 'number') return resolve(m);
        this.waiting.get(m.id)?.(m);
        this.waiting.delete(m.id);
      });
    });
  }

  static fork(file: string): Child {
    return new Child(fork(path.join(__dirname, file), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  ask<T>(message: Record<string, unknown>): Promise<T> {
    const id = ++this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve as (answer: Record<string, unknown>) => void);
      this.process.send({ ...message, id });
    });
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
export const summary = (samples: number[]) => {
  if (samples.length === 0) return { n: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50_ms: quantile(sorted, 0.5),
    p99_ms: quantile(sorted, 0.99),
    min_ms: sorted[0],
    max_ms: sorted[sorted.length - 1],
  };
};

/** The platform as the public API reaches it: its base URL and a key. */
export interface ApiTarget {
  apiUrl: string;
  apiKey: string;
}

/**
 * A factory, a token-mode webhook and an automation starting a run of `environmentId` for every delivery: the
 * webhook case. Answers the webhook (`ingress_url`, `secret`) and the automation's ID.
 */
export async function webhookAutomation(
  platform: ApiTarget,
  environmentId: string,
  model: string,
): Promise<{ webhook: { ingress_url: string; secret: string }; automationId: string }> {
  // A name of its own: the cluster's database outlives a bench run, and factory names are unique per team.
  const factory = await apiCall(platform, 'POST', '/factories', { name: `time-to-agent-${randomUUID()}` });
  const factoryId = String(factory.body.factory_id);
  const webhook = await apiCall(platform, 'POST', `/factories/${factoryId}/webhooks`, { name: 'tta' });
  if (webhook.status >= 300)
    throw new Error(`factory ${factory.status}, webhook ${webhook.status}: ${JSON.stringify(webhook.body)}`);
  const automation = await apiCall(platform, 'POST', `/factories/${factoryId}/automations`, {
    name: 'time-to-agent',
    prompt: 'Say hello.',
    agent_config: { environment_id: environmentId, harness: { model_id: model } },
    trigger: {
      provider: 'webhook',
      event: 'received',
      filter: { webhook_ids: [webhook.body.webhook_uid] },
    },
  });
  if (automation.status >= 300) throw new Error(`automation: ${JSON.stringify(automation.body)}`);
  return {
    webhook: { ingress_url: String(webhook.body.ingress_url), secret: String(webhook.body.secret) },
    automationId: String(automation.body.automation_id ?? automation.body.id),
  };
}

/**
 * Posts one webhook delivery through the load process and waits for the run the automation starts for it (one not
 * in `seen`, which it joins): the run's ID and the time the delivery was sent.
 */
export async function deliverWebhook(
  load: Child,
  platform: ApiTarget,
  delivery: { url: string; secret: string; automationId: string; seen: Set<string>; timeoutMs: number },
): Promise<{ runId: string; sentAt: number }> {
  const sent = await load.ask<{ sentAt: number; status: number; body: unknown }>({
    url: delivery.url,
    headers: {
      authorization: `Bearer ${delivery.secret}`,
      'content-type': 'application/json',
      'x-service-delivery-id': randomUUID(),
    },
    body: { action: 'opened', issue: { number: 7, title: 'time to agent' } },
  });
  if (sent.status !== 202) throw new Error(`webhook: ${sent.status} ${JSON.stringify(sent.body)}`);
  const deadline = Date.now() + delivery.timeoutMs;
  while (Date.now() < deadline) {
    const list = await apiCall(
      platform,
      'GET',
      `/agent/runs?automation_id=${delivery.automationId}&limit=50`,
    );
    const fresh = ((list.body.runs ?? []) as Array<{ run_id: string }>).find(
      (r) => !delivery.seen.has(r.run_id),
    );
    if (fresh) {
      delivery.seen.add(fresh.run_id);
      return { runId: fresh.run_id, sentAt: sent.sentAt };
    }
    await sleep(25);
  }
  throw new Error('the webhook delivery started no run');
}

/** An environment of the team with these setup commands; its ID. */
export async function environment(platform: ApiTarget, name: string, setup: string[]): Promise<string> {
  const created = await apiCall(platform, 'POST', '/agent/environments', { name, setup_commands: setup });
  if (created.status !== 201)
    throw new Error(`environment: ${created.status} ${JSON.stringify(created.body)}`);
  return String(created.body.uid);
}
