import { randomUUID } from 'node:crypto';
import {
  longCommand,
  longCommandScript,
  startScriptedModelServer,
  type Json,
  type ScriptedModelServer,
} from '@conveyor/testing';
import { cluster, eventually, kubectl, runPods, turnCheckpoint } from './cluster';
import { api, MODEL, nextEventAt, timeline, toolOutputs, waitForState } from './runs';

// A rolling upgrade of the whole platform while it works (deploy/README.md "Upgrading"): two replicas of every
// service, `claude` runs whose tool step outlasts the upgrade, webhook deliveries at a steady rate, and
// `kubectl rollout restart` of each Deployment in turn, one run's Pod deleted before the runner's turn. Every run ends
// SUCCEEDED with its agent's own result and its agent started once (the deleted one resumed once from its checkpoint),
// every accepted delivery is recorded once, and the API answers only 2xx or a retryable 503.

/** Runs in flight, all at once: k8s/values/kubernetes-test.yaml sizes the run Pods and the runners for ten. */
const RUNS = 10;
/** The tool step: long enough that every Deployment's restart, and the lost Pod's resumption, happen while it runs. */
const STEP_SECONDS = 420;
/** The runner last: its old Pods hand the runs over while the new ones take new jobs. */
const DEPLOYMENTS = ['conveyor-orchestrator', 'conveyor-gateway', 'conveyor-ingress', 'conveyor-runner'];
/** What Claude Code tells the model when it resumes a session whose environment went (pod-loss-resumption). */
const LOST = 'environment was lost';

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

  it('ends every run SUCCEEDED with its own result (the lost one resumed once), records every accepted delivery once, and answers 2xx or 503', async () => {
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
    // Each run's own tag in its prompt: the model's requests of each run told apart.
    const nonce = randomUUID().slice(0, 8);
    const tag = (i: number) => `[upgrade ${nonce} run ${i}]`;
    const turnsOf = (i: number) =>
      server.requests.filter((r) => r.scripted && JSON.stringify(r.body).includes(tag(i)));
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const created = await api('POST', '/agent/runs', {
        prompt: `Wait through the upgrade ${tag(i)}`,
        config: { environment_id: environment.body.uid, harness: { model_id: MODEL } },
      });
      expect(created.status).toBe(200);
      runIds.push(created.body.run_id as string);
    }
    const stepsStarted = await eventually(
      async () => {
        const firstTurns = runIds.map((_, i) => turnsOf(i)[0]);
        return firstTurns.every((r) => r !== undefined)
          ? Math.min(...firstTurns.map((r) => r!.receivedAt))
          : undefined;
      },
      'every agent to start its long step',
      420_000,
    );

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
    const restart = async (deployment: string) => {
      await kubectl('rollout', 'restart', `deployment/${deployment}`);
      await kubectl('rollout', 'status', `deployment/${deployment}`, '--timeout=300s');
    };
    for (const deployment of DEPLOYMENTS.slice(0, -1)) await restart(deployment);

    // Mid-rollout, one run's Pod goes mid-step (as pod-loss-resumption deletes it) once its first turn is
    // checkpointed: the run goes on from that checkpoint in a new Pod, then the runner rolls.
    const LOST_RUN = 0;
    const lostRunId = runIds[LOST_RUN]!;
    await eventually(
      () => turnCheckpoint(lostRunId),
      "the lost run's first turn to be checkpointed",
      120_000,
    );
    const [lostPod] = (await runPods(lostRunId)).filter((p) => p.phase === 'Running' && !p.deleting);
    server.enqueue(answer!);
    const seen = (await timeline(lostRunId)).length;
    const lostAt = Date.now();
    await kubectl('delete', 'pod', lostPod!.name, '--grace-period=1', '--wait=false');
    const nextEvent = await nextEventAt(lostRunId, seen);
    const resumedTurn = await eventually(
      async () => turnsOf(LOST_RUN).find((r) => JSON.stringify(r.body).includes(LOST)),
      'the lost run to ask the model again',
      600_000,
    );
    await restart(DEPLOYMENTS.at(-1)!);
    const rolledMs = Date.now() - stepsStarted;
    rolling = false;
    await traffic;

    const outcome = [...answers.keys()].filter(
      (what) => !/^(api 2\d\d|api 503|delivery 202|delivery 503)$/.test(what),
    );
    expect(outcome).toEqual([]);
    // The first step to start was still running when the last Deployment had rolled (else this proved nothing).
    expect(rolledMs).toBeLessThan(STEP_SECONDS * 1000);
    for (const [i, runId] of runIds.entries()) {
      const ended = await waitForState(
        runId,
        ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'],
        STEP_SECONDS * 1000 + 240_000,
      );
      expect({ runId, state: ended.state }).toEqual({ runId, state: 'SUCCEEDED' });
      // Its first turn seen once; the lost run's second request is its resumption, the others' the step's answer.
      const turns = turnsOf(i);
      expect(turns.filter((r) => !JSON.stringify(r.body).includes(LOST))).toHaveLength(
        i === LOST_RUN ? 1 : 2,
      );
      if (i === LOST_RUN) {
        expect(turns).toHaveLength(2);
        const lost = (await timeline(runId)).filter((e) => e.kind === 'agent_lost').map((e) => e.data);
        expect(lost).toEqual([expect.objectContaining({ resumed: true, turn: 1, resumption: 1 })]);
        expect(String(lost[0]!.text)).toBe("Resumed after the run's Pod was deleted at turn 1");
        continue;
      }
      // Its agent's own result: the step's output and the model's answer after it, in one execution.
      expect(await toolOutputs(runId)).toContain('waited');
      const conversation = (await api('GET', `/agent/runs/${runId}/conversation`)).body as {
        messages: Array<{ execution: number; role: string; steps: Json[] }>;
      };
      expect(new Set(conversation.messages.map((m) => m.execution))).toEqual(new Set([1]));
      expect(JSON.stringify(conversation.messages)).toContain('Waited.');
    }
    // Each agent started once: two model requests per run, no more (the lost run's second is its resumption).
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

    // Measured (docs/sandbox.md): from the Pod's deletion to the run's next event, and to its agent asking the
    // model again from the checkpoint; how long the whole rollout took from the first step's start.
    process.stdout.write(
      `${JSON.stringify({
        podLossToNextEventMs: nextEvent - lostAt,
        podLossToStreamingMs: resumedTurn.receivedAt - lostAt,
        rolledMs,
      })}\n`,
    );
  }, 1_500_000);
});
