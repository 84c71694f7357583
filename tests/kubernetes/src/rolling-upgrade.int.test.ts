import { randomUUID } from 'node:crypto';
import {
  longCommand,
  longCommandScript,
  startScriptedModelServer,
  type Json,
  type ScriptedModelServer,
} from '@conveyor/testing';
import { cluster, eventually, kubectl } from './cluster';
import { api, MODEL, toolOutputs, waitForState } from './runs';

// A rolling upgrade of the whole platform while it works (deploy/README.md "Upgrading"): two replicas of every
// service, `claude` runs whose tool step outlasts the upgrade, webhook deliveries at a steady rate, and
// `kubectl rollout restart` of each Deployment in turn. Every run ends SUCCEEDED with its agent's own result and its
// agent started once, every accepted delivery is recorded once, and the API answers only 2xx or a retryable 503.

/** Runs in flight: what the single node's CPU takes at once beside the platform (a run's Pod asks for 500m). */
const RUNS = 3;
/** The tool step: long enough that every Deployment's restart happens while it runs. */
const STEP_SECONDS = 240;
/** The runner last: its old Pods drain the runs while the new ones take new jobs. */
const DEPLOYMENTS = ['conveyor-orchestrator', 'conveyor-gateway', 'conveyor-ingress', 'conveyor-runner'];

describe('a rolling upgrade of every Deployment while runs and deliveries are in flight', () => {
  let server: ScriptedModelServer;

  beforeAll(async () => {
    server = await startScriptedModelServer([], { host: cluster.nodeIp, port: cluster.modelServerPort });
    for (const deployment of DEPLOYMENTS)
      await kubectl('rollout', 'status', `deployment/${deployment}`, '--timeout=300s');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('ends every run SUCCEEDED with its own result, records every accepted delivery once, and answers 2xx or 503', async () => {
    const key = `sk-k8s-provider-${randomUUID()}`;
    expect((await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: key })).status).toBe(200);
    const environment = await api('POST', '/agent/environments', { name: 'rolling upgrade' });
    expect(environment.status).toBe(201);
    // Every run's first turn asks for the long step; the model's second turns come after every step has ended.
    const [, answer] = longCommandScript('claude', STEP_SECONDS);
    // Claude Code's Bash tool gives up on a command after 2 minutes unless the call names a longer timeout (ms).
    const step = {
      toolCalls: [
        {
          name: 'Bash',
          input: { command: longCommand(STEP_SECONDS), description: 'Wait', timeout: 600_000 },
        },
      ],
    };
    server.enqueue(
      ...Array.from({ length: RUNS }, () => step),
      ...Array.from({ length: RUNS }, () => answer!),
    );
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const created = await api('POST', '/agent/runs', {
        prompt: `Wait through the upgrade (${i})`,
        config: { environment_id: environment.body.uid, harness: { model_id: MODEL } },
      });
      expect(created.status).toBe(200);
      runIds.push(created.body.run_id as string);
    }
    const stepsStarted = await eventually(async () => {
      const firstTurns = server.requests.filter((r) => r.scripted);
      return firstTurns.length >= RUNS ? Math.min(...firstTurns.map((r) => r.receivedAt)) : undefined;
    }, 'every agent to start its long step');

    // A webhook no automation listens to: its deliveries are recorded and start nothing.
    const factory = await api('POST', '/factories', { name: `upgrade-${Date.now()}` });
    const hook = await api('POST', `/factories/${factory.body.factory_id as string}/webhooks`, {
      name: 'upgrade hook',
      delivery_id_header: 'x-test-delivery',
    });
    expect(hook.status).toBe(201);
    const deliveryUrl = `${cluster.ingressUrl}${new URL(hook.body.ingress_url as string).pathname}`;

    // The API and the webhook edge are called steadily until every Deployment has rolled.
    const answers = new Map<string, number>();
    const count = (what: string) => answers.set(what, (answers.get(what) ?? 0) + 1);
    const accepted: string[] = [];
    let rolling = true;
    const traffic = (async () => {
      while (rolling) {
        const deliveryId = randomUUID();
        await Promise.all([
          fetch(deliveryUrl, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${hook.body.secret as string}`,
              'x-test-delivery': deliveryId,
            },
            body: JSON.stringify({ deliveryId }),
          }).then(
            (res) => {
              count(`delivery ${res.status}`);
              if (res.status === 202) accepted.push(deliveryId);
            },
            (err: Error) => count(`delivery ${err.message}`),
          ),
          fetch(`${cluster.apiUrl}/agent/runs/${runIds[0]!}`, {
            headers: { Authorization: `Bearer ${cluster.apiKey}` },
          }).then(
            (res) => count(`api ${res.status}`),
            (err: Error) => count(`api ${err.message}`),
          ),
        ]);
        // Under the ingress's DELIVERY_RATE_PER_MINUTE (60): a 429 would be the limit, not the upgrade.
        await new Promise((r) => setTimeout(r, 1500));
      }
    })();
    for (const deployment of DEPLOYMENTS) {
      await kubectl('rollout', 'restart', `deployment/${deployment}`);
      await kubectl('rollout', 'status', `deployment/${deployment}`, '--timeout=300s');
    }
    const rolledMs = Date.now() - stepsStarted;
    rolling = false;
    await traffic;

    const outcome = [...answers.keys()].filter(
      (what) => !/^(api 2\d\d|api 503|delivery 202|delivery 503)$/.test(what),
    );
    expect(outcome).toEqual([]);
    // The first step to start was still running when the last Deployment had rolled (else this proved nothing).
    expect(rolledMs).toBeLessThan(STEP_SECONDS * 1000);
    for (const runId of runIds) {
      const ended = await waitForState(
        runId,
        ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'],
        STEP_SECONDS * 1000 + 240_000,
      );
      expect({ runId, state: ended.state }).toEqual({ runId, state: 'SUCCEEDED' });
      // Its agent's own result: the step's output and the model's answer after it, in one execution.
      expect(await toolOutputs(runId)).toContain('waited');
      const conversation = (await api('GET', `/agent/runs/${runId}/conversation`)).body as {
        messages: Array<{ execution: number; role: string; steps: Json[] }>;
      };
      expect(new Set(conversation.messages.map((m) => m.execution))).toEqual(new Set([1]));
      expect(JSON.stringify(conversation.messages)).toContain('Waited.');
    }
    // Each agent started once: one first turn and one second turn per run, no more.
    expect(server.requests.filter((r) => r.scripted)).toHaveLength(2 * RUNS);

    const deliveryLog = `/factories/${factory.body.factory_id as string}/webhooks/${hook.body.webhook_uid as string}/deliveries`;
    const recorded = await eventually(async () => {
      // The log pages at most 200 deliveries; a rollout of four Deployments sends more.
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await api(
          'GET',
          `${deliveryLog}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.status).toBe(200);
        ids.push(...((page.body.deliveries as Json[] | undefined) ?? []).map((d) => d.delivery_id as string));
        cursor = page.body.next_cursor as string | undefined;
      } while (cursor);
      return ids.length >= accepted.length ? ids : undefined;
    }, 'every accepted delivery to be recorded');
    expect(accepted.length).toBeGreaterThan(0);
    expect([...recorded].sort()).toEqual([...accepted].sort());
  }, 900_000);
});
