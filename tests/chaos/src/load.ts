import type { Installation } from './installation';
import { sleep } from './installation';

/** The demo harness runs this long (`@demo` directives, services/runner/src/harness/demo-directives.ts). */
export const RUN_PROMPT = '@demo sleep 1000\nChaos load: a run that takes a second.';

/** What the load saw answered, by HTTP status (0: no answer); 503s during an outage are expected. */
export type Answers = Record<string, number>;

interface Hook {
  url: string;
  secret: string;
}

async function call(installation: Installation, method: string, path: string, body?: unknown) {
  const res = await fetch(`${installation.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${installation.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A steady load: one API run a second, and one webhook delivery a second (each a new delivery ID, sent once; an
 * automation starts a run for every accepted one). Records what was accepted, to be checked against the database.
 */
export class SteadyLoad {
  readonly runs: string[] = [];
  readonly deliveries: Array<{ id: string; at: number }> = [];
  readonly runAnswers: Answers = {};
  readonly deliveryAnswers: Answers = {};
  private stopped = false;
  private loops: Promise<void>[] = [];
  /** Requests sent and not answered yet: stop() waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private sent = 0;

  private constructor(
    private readonly installation: Installation,
    private readonly hook: Hook,
  ) {}

  static async start(installation: Installation): Promise<SteadyLoad> {
    const factory = await call(installation, 'POST', '/factories', { name: 'chaos' });
    const factoryId = factory.factory_id as string;
    const hook = await call(installation, 'POST', `/factories/${factoryId}/webhooks`, { name: 'chaos' });
    await call(installation, 'POST', `/factories/${factoryId}/automations`, {
      name: 'on-every-delivery',
      prompt: 'Handle the delivery.',
      trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.webhook_uid] } },
    });
    const load = new SteadyLoad(installation, {
      url: hook.ingress_url as string,
      secret: hook.secret as string,
    });
    load.loops = [load.every(1000, () => load.createRun()), load.every(1000, () => load.deliver())];
    return load;
  }

  private async every(ms: number, step: () => Promise<unknown>): Promise<void> {
    while (!this.stopped) {
      // Not awaited: a request hanging on an outage must not slow the load down.
      const request = step().finally(() => this.inFlight.delete(request));
      this.inFlight.add(request);
      await sleep(ms);
    }
  }

  private static count(answers: Answers, status: number): void {
    answers[status] = (answers[status] ?? 0) + 1;
  }

  async createRun(prompt = RUN_PROMPT, config?: Record<string, unknown>): Promise<string | undefined> {
    try {
      const res = await fetch(`${this.installation.apiUrl}/agent/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.installation.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt, ...(config ? { config } : {}) }),
        signal: AbortSignal.timeout(15_000),
      });
      SteadyLoad.count(this.runAnswers, res.status);
      if (!res.ok) return undefined;
      const runId = ((await res.json()) as { run_id: string }).run_id;
      this.runs.push(runId);
      return runId;
    } catch {
      SteadyLoad.count(this.runAnswers, 0);
      return undefined;
    }
  }

  private async deliver(): Promise<void> {
    const id = `chaos-${++this.sent}`;
    try {
      const res = await fetch(this.hook.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.hook.secret}`,
          'content-type': 'application/json',
          'x-service-delivery-id': id,
        },
        body: JSON.stringify({ n: this.sent }),
        signal: AbortSignal.timeout(15_000),
      });
      SteadyLoad.count(this.deliveryAnswers, res.status);
      if (res.status === 202) this.deliveries.push({ id, at: Date.now() });
    } catch {
      SteadyLoad.count(this.deliveryAnswers, 0);
    }
  }

  /** Both answer counts, API runs' and deliveries' (keyed `run <status>`, `delivery <status>`). */
  answers(): Answers {
    const all: Answers = {};
    for (const [status, n] of Object.entries(this.runAnswers)) all[`run ${status}`] = n;
    for (const [status, n] of Object.entries(this.deliveryAnswers)) all[`delivery ${status}`] = n;
    return all;
  }

  /** The answers counted since `before` (an earlier `answers()`), by HTTP status. */
  answersSince(before: Answers): Answers {
    const since: Answers = {};
    for (const [key, n] of Object.entries(this.answers())) {
      const status = key.split(' ')[1]!;
      since[status] = (since[status] ?? 0) + n - (before[key] ?? 0);
    }
    return since;
  }

  /**
   * Stops sending and waits for every request sent to be answered (each gives up after 15 s): a run's `createdAt` is
   * stamped before its row commits, so a check that reads the runs created before some instant must not start while
   * a request that may commit one is still in flight.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
    await Promise.all(this.inFlight);
  }
}
