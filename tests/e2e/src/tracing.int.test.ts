import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startJaeger, type JaegerSpan, type RunningJaeger } from '@conveyor/testing';
import { runCli, startPlatform, type RunningPlatform } from './platform';
import { webhookApi } from './webhook-helpers';
import { apiCall, eventually, waitForRunState } from './run-waits';

const AGENT = path.resolve(__dirname, '../fixtures/model-calling-agent.js');
const KEY = `sk-ant-e2e-${randomUUID()}`;
// A trace context a caller makes up: the public API must not continue it (docs/observability.md).
const FORGED_TRACE = 'feedfacefeedfacefeedfacefeedface';
const ROOT = path.resolve(__dirname, '../../..');

/**
 * OpenTelemetry across every hop, read back from a real Jaeger (all-in-one, built from the Go module proxy): one run,
 * from the API request to the agent's model request and the completion, is one trace with the spans of the gateway,
 * the orchestrator and the runner, each span's parent where it belongs. The scripted Anthropic server is the only
 * fake, at the network seam.
 */
describe('tracing: a run is one trace across gateway, orchestrator, runner and the model request', () => {
  let jaeger: RunningJaeger;
  let platform: RunningPlatform;
  let model: Server;
  const modelHeaders: IncomingHttpHeaders[] = [];
  const workers: ChildProcess[] = [];
  let workerLogs = '';

  beforeAll(async () => {
    jaeger = await startJaeger();
    model = createServer((req, res) => {
      modelHeaders.push(req.headers);
      req.resume();
      req.on('end', () => {
        const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          event('message_start', {
            type: 'message_start',
            message: { id: 'msg_1', role: 'assistant', usage: { input_tokens: 10, output_tokens: 1 } },
          }) +
            event('content_block_delta', {
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'text_delta', text: 'traced' },
            }) +
            event('message_stop', { type: 'message_stop' }),
        );
      });
    });
    model.listen(0, '127.0.0.1');
    await once(model, 'listening');
    platform = await startPlatform({
      env: {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
        // Exported within a second rather than the default five.
        OTEL_BSP_SCHEDULE_DELAY: '500',
        // A frozen worker's run is found lost, and the frozen worker stale, within seconds (the requeue case).
        HEARTBEAT_INTERVAL_MS: '1000',
        RUNNER_LOST_AFTER_MS: '6000',
        WORKER_HEARTBEAT_INTERVAL_MS: '1000',
        WORKER_STALE_AFTER_MS: '3000',
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${(model.address() as AddressInfo).port}`,
        HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }),
        MODELS_CONFIG: JSON.stringify({
          models: [
            {
              id: 'claude-sonnet-4',
              provider: 'anthropic',
              cost: { input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 },
            },
          ],
        }),
      },
    });
    expect((await apiCall(platform, 'PUT', '/secrets/ANTHROPIC_API_KEY', { value: KEY })).status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await platform?.stop();
    await jaeger?.stop();
    model?.close();
  });

  it('reads the run back from Jaeger: one trace, spans from every service, parent links right', async () => {
    const res = await fetch(`${platform.apiUrl}/agent/runs`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${platform.apiKey}`,
        'content-type': 'application/json',
        traceparent: `00-${FORGED_TRACE}-1111111111111111-01`,
      },
      body: JSON.stringify({
        prompt: JSON.stringify({ task: 'chat', out: path.join(os.tmpdir(), `trace-${randomUUID()}.json`) }),
        config: { harness: { type: 'claude' } },
      }),
    });
    expect(res.status).toBe(200);
    const runId = ((await res.json()) as { run_id: string }).run_id;
    expect((await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000)).state).toBe(
      'SUCCEEDED',
    );

    // The run's trace, once the runner's completion span arrived (spans are exported in batches).
    let spans: JaegerSpan[] = [];
    const matches = (s: JaegerSpan, service: string, name: string | RegExp) =>
      s.service === service &&
      (typeof name === 'string' ? s.operationName === name : name.test(s.operationName));
    const has = (service: string, name: string | RegExp) => spans.some((s) => matches(s, service, name));
    await eventually(
      async () => {
        const traces = await jaeger.findTraces('runner', 'run', { 'conveyor.run_id': runId });
        if (traces.length !== 1) return false;
        spans = await jaeger.trace(traces[0]![0]!.traceID);
        return has('runner', 'completion') && has('orchestrator', /CompleteRun/);
      },
      `the trace of run ${runId} in Jaeger`,
      platform,
      30_000,
    );
    const byId = new Map(spans.map((s) => [s.spanID, s]));
    const parentOf = (span: JaegerSpan) => (span.parentSpanID ? byId.get(span.parentSpanID) : undefined);
    const find = (service: string, name: string | RegExp): JaegerSpan => {
      const found = spans.find((s) => matches(s, service, name));
      if (!found)
        throw new Error(
          `no ${service} span ${String(name)} in ${spans.map((s) => `${s.service}:${s.operationName}`).join(', ')}`,
        );
      return found;
    };

    // One trace, rooted at the gateway's request: the caller's made-up trace context was not continued.
    const traceId = spans[0]!.traceID;
    expect(traceId).not.toBe(FORGED_TRACE);
    expect(new Set(spans.map((s) => s.traceID))).toEqual(new Set([traceId]));
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['gateway', 'orchestrator', 'runner']));
    const roots = spans.filter((s) => !parentOf(s));
    expect(roots.map((s) => `${s.service}:${s.operationName}`)).toEqual([
      expect.stringMatching(/^gateway:POST/),
    ]);
    expect(spans.every((s) => s === roots[0] || parentOf(s))).toBe(true);

    // gateway → gRPC → orchestrator's CreateRun → outbox relay → runner's run → phases, model request, completion.
    const createRun = find('orchestrator', /CreateRun$/);
    expect(parentOf(createRun)).toMatchObject({
      service: 'gateway',
      operationName: expect.stringMatching(/CreateRun$/),
    });
    // The orchestrator's PostgreSQL statements (Prisma's, through its pg driver adapter) are under the gRPC span.
    expect(
      spans.some(
        (s) =>
          s.service === 'orchestrator' && parentOf(s) === createRun && /^pg\.query/.test(s.operationName),
      ),
    ).toBe(true);
    const relay = find('orchestrator', 'outbox relay');
    expect(relay.tags['conveyor.run_id']).toBe(runId);
    const run = find('runner', 'run');
    expect(parentOf(run)).toBe(relay);
    for (const phase of ['claim', 'sandbox', 'workspace', 'harness start', 'harness', 'completion'])
      expect(parentOf(find('runner', phase))).toBe(run);
    const modelRequest = find('runner', 'model request');
    expect(parentOf(modelRequest)).toBe(run);
    // The proxy's upstream call is the model request's child, and the model provider was handed that context.
    const upstream = spans.find((s) => s.service === 'runner' && parentOf(s) === modelRequest);
    expect(upstream?.operationName).toMatch(/^POST/);
    expect(modelHeaders.at(-1)?.traceparent).toMatch(new RegExp(`^00-${traceId}-${upstream!.spanID}-`));
    // The runner's calls to the orchestrator are children of its run, and the orchestrator serves them in the trace.
    const completeRun = find('orchestrator', /CompleteRun$/);
    expect(parentOf(completeRun)?.service).toBe('runner');
    expect(parentOf(find('orchestrator', /ClaimRun$/))).toMatchObject({ service: 'runner' });
  }, 120_000);

  it("keeps a GitHub App manifest callback's code and state out of its spans", async () => {
    const code = `code-${randomUUID()}`;
    const state = `state-${randomUUID()}`;
    const res = await fetch(
      `${platform.apiUrl}/integrations/github-apps/manifest/callback?code=${code}&state=${state}`,
      { headers: { accept: 'application/json' } },
    );
    expect(res.status).toBe(400);
    let spans: JaegerSpan[] = [];
    await eventually(
      async () => {
        const traces = await jaeger.findTraces('gateway', '', {
          'url.path': '/v1/integrations/github-apps/manifest/callback',
        });
        spans = traces.flat();
        return spans.length > 0;
      },
      'the callback request in Jaeger',
      platform,
      30_000,
    );
    expect(spans.map((s) => s.tags['url.query'])).toContain('code=REDACTED&state=REDACTED');
    expect(JSON.stringify(spans)).not.toContain(code);
    expect(JSON.stringify(spans)).not.toContain(state);
  }, 60_000);

  it('follows a webhook delivery: ingress → Kafka → the delivery → the run it starts, in one trace', async () => {
    const w = webhookApi(platform);
    const factoryId = await w.factory('traced');
    const hook = await w.webhook(factoryId, { name: 'traced-hook' });
    const automation = await w.api('POST', `/factories/${factoryId}/automations`, {
      name: 'traced-automation',
      prompt: 'Handle the delivery.',
      trigger: { provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.webhook_uid] } },
    });
    expect(automation.status).toBe(201);
    const res = await fetch(hook.ingress_url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${hook.secret!}`,
        'content-type': 'application/json',
        'x-service-delivery-id': `traced-${randomUUID()}`,
        // A sender's trace context is not continued either.
        traceparent: `00-${FORGED_TRACE}-2222222222222222-01`,
      },
      body: JSON.stringify({ traced: true }),
    });
    expect(res.status).toBe(202);

    let spans: JaegerSpan[] = [];
    await eventually(
      async () => {
        const traces = await jaeger.findTraces('orchestrator', 'webhook delivery', {});
        if (traces.length !== 1) return false;
        spans = await jaeger.trace(traces[0]![0]!.traceID);
        return spans.some((s) => s.service === 'runner' && s.operationName === 'completion');
      },
      'the trace of the webhook delivery in Jaeger',
      platform,
      60_000,
    );
    const byId = new Map(spans.map((s) => [s.spanID, s]));
    const parentOf = (span: JaegerSpan) => (span.parentSpanID ? byId.get(span.parentSpanID) : undefined);
    const one = (service: string, name: string) => {
      const found = spans.filter((s) => s.service === service && s.operationName === name);
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    expect(spans[0]!.traceID).not.toBe(FORGED_TRACE);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['ingress', 'orchestrator', 'runner']));
    const roots = spans.filter((s) => !parentOf(s));
    expect(roots.map((s) => `${s.service}:${s.operationName}`)).toEqual([
      expect.stringMatching(/^ingress:POST/),
    ]);
    const delivery = one('orchestrator', 'webhook delivery');
    expect(parentOf(delivery)?.service).toBe('ingress');
    const relay = one('orchestrator', 'outbox relay');
    expect(parentOf(relay)).toBe(delivery);
    expect(parentOf(one('runner', 'run'))).toBe(relay);
  }, 120_000);

  /** A self-hosted worker (worker-main.js) tracing to the same Jaeger, on the platform's worker endpoint. */
  function startWorker(token: string, workerId: string): ChildProcess {
    const child = spawn(process.execPath, [path.join(ROOT, 'services/runner/dist/worker-main.js')], {
      env: {
        ...process.env,
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
        OTEL_BSP_SCHEDULE_DELAY: '500',
        CONVEYOR_WORKER_TOKEN: token,
        WORKER_ID: workerId,
        WORKER_ENDPOINT: platform.workerEndpointAddr,
        WORKER_ENDPOINT_CA_FILE: platform.trust.caFile,
        WORKSPACE_ROOT: path.join(os.tmpdir(), `worker-${randomUUID()}`),
        HEARTBEAT_INTERVAL_MS: '1000',
        RUN_SANDBOX: 'none',
        RUN_SANDBOX_NONE_ACKNOWLEDGED: 'runs-are-not-isolated',
        LOG_LEVEL: 'info',
      },
    });
    child.stdout?.on('data', (d: Buffer) => (workerLogs += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (workerLogs += d.toString()));
    workers.push(child);
    return child;
  }

  it("a self-hosted worker run, re-queued after its first worker froze, is one trace: dispatch, requeue, the worker's run", async () => {
    const token = (
      JSON.parse(
        await runCli(['worker-token', 'create', '--team', 'team_dev', '--name', 'traced'], platform.env),
      ) as { token: string }
    ).token;
    const connected = async () => {
      const res = await apiCall(platform, 'GET', '/agent/connected-self-hosted-workers');
      return (res.body as { workers: Array<{ worker_id: string }> }).workers.length;
    };
    // The first worker takes the run's first execution and freezes with it (no heartbeat, no report): the sweeper
    // finds the run lost before its agent started and queues it again, for the second worker.
    const frozen = startWorker(token, 'traced-box');
    await eventually(async () => (await connected()) === 1, 'the first worker connected', platform, 30_000);
    frozen.kill('SIGSTOP');
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: 'on the traced box\n@demo message traced on a worker',
      config: { worker_host: 'traced-box' },
    });
    expect(created.status).toBe(200);
    const runId = (created.body as { run_id: string }).run_id;
    await eventually(
      async () => {
        const run = await apiCall(platform, 'GET', `/agent/runs/${runId}`);
        return (run.body as { state: string }).state === 'QUEUED' && (await connected()) === 0;
      },
      `run ${runId} re-queued and the frozen worker stale`,
      platform,
      60_000,
    );
    startWorker(token, 'traced-box');
    const ended = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
    expect(ended.state).toBe('SUCCEEDED');
    frozen.kill('SIGKILL');

    let spans: JaegerSpan[] = [];
    await eventually(
      async () => {
        const traces = await jaeger.findTraces('orchestrator', 'runner lost', { 'conveyor.run_id': runId });
        if (traces.length !== 1) return false;
        spans = await jaeger.trace(traces[0]![0]!.traceID);
        return spans.some((s) => s.service === 'worker' && s.operationName === 'completion');
      },
      `the trace of run ${runId} in Jaeger\n${workerLogs.slice(-2000)}`,
      platform,
      30_000,
    );
    const byId = new Map(spans.map((s) => [s.spanID, s]));
    const parentOf = (span: JaegerSpan) => (span.parentSpanID ? byId.get(span.parentSpanID) : undefined);
    const named = (service: string, name: string) =>
      spans.filter((s) => s.service === service && s.operationName === name);

    // One trace from the API request; every span's parent in it.
    expect(new Set(spans.map((s) => s.traceID)).size).toBe(1);
    const roots = spans.filter((s) => !parentOf(s));
    expect(roots.map((s) => `${s.service}:${s.operationName}`)).toEqual([
      expect.stringMatching(/^gateway:POST/),
    ]);
    const createRun = spans.find((s) => s.service === 'orchestrator' && /CreateRun$/.test(s.operationName))!;
    // Execution 1 dispatched to the frozen worker (whose spans never left it), then the sweeper's requeue, both in
    // the run's trace; execution 2's dispatch follows the requeue, and the second worker's run follows its dispatch.
    const dispatches = named('orchestrator', 'worker dispatch');
    expect(dispatches.map((d) => d.tags['conveyor.execution']).sort()).toEqual([1, 2]);
    const [first, second] = [1, 2].map((e) => dispatches.find((d) => d.tags['conveyor.execution'] === e)!);
    expect(parentOf(first!)).toBe(createRun);
    const [lost] = named('orchestrator', 'runner lost');
    expect(lost!.tags).toMatchObject({ 'conveyor.run_id': runId, 'conveyor.execution': 1 });
    expect(parentOf(lost!)).toBe(createRun);
    expect(parentOf(second!)).toBe(lost);
    const runs = named('worker', 'run');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.tags).toMatchObject({ 'conveyor.run_id': runId, 'conveyor.execution': 2 });
    expect(parentOf(runs[0]!)).toBe(second);
    // The worker records the runner's phases, and the orchestrator serves its calls inside the trace.
    for (const phase of ['claim', 'workspace', 'harness start', 'harness', 'completion'])
      expect(named('worker', phase).map(parentOf)).toEqual([runs[0]]);
    const completeRun = spans.find(
      (s) => s.service === 'orchestrator' && /CompleteRun$/.test(s.operationName),
    );
    expect(parentOf(completeRun!)?.service).toBe('worker');
    // The orchestrator's queries are under the spans that made them: the claim for the worker under its dispatch.
    expect(
      spans.some(
        (s) => s.service === 'orchestrator' && parentOf(s) === second && /^pg\.query/.test(s.operationName),
      ),
    ).toBe(true);
  }, 240_000);
});
