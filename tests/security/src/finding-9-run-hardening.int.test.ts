import { randomUUID } from 'node:crypto';
import { apiCall, type RunningPlatform, type ScriptedModelServer } from '@conveyor/testing';
import { startHardeningPlatform, stringsIn } from './hardening-platform';

// Issue 23, the hardening part: what a run reaches from inside its bubblewrap sandbox beyond its own work. A hostile
// command harness (fixtures/run-hardening-agent.js, standing in for each CLI type) probes the model proxy, the kernel
// and the harness-support endpoint, and reports what happened; the real runner, bubblewrap and services answer.
jest.setTimeout(180_000);

const PROVIDER_KEY = `sk-hardening-${randomUUID()}`;

type Report = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the agent's free-form report
type Call = [method: string, path: string, body?: unknown];

describe('finding 9: a run reaches only inference, a kernel without namespaces or Docker-denied syscalls, and harness support', () => {
  let platform: RunningPlatform;
  let model: ScriptedModelServer;

  beforeAll(async () => {
    ({ platform, model } = await startHardeningPlatform(PROVIDER_KEY));
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  });

  /** Runs the agent as harness `type` with `probes` as its prompt; its report and the run's timeline. */
  async function probe(type: string, probes: Report): Promise<{ report: Report; timeline: Report[] }> {
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: JSON.stringify(probes),
      config: { harness: { type } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    for (const deadline = Date.now() + 120_000; ;) {
      const run = (await apiCall(platform, 'GET', `/agent/runs/${runId}`)).body;
      if (['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state as string)) {
        expect([run.state, run.status_message]).toEqual(['SUCCEEDED', expect.anything()]);
        break;
      }
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end\n${platform.logs().slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const conversation = (await apiCall(platform, 'GET', `/agent/runs/${runId}/conversation`)).body;
    const report = stringsIn(conversation)
      .find((s) => s.startsWith('HARDENING-REPORT '))
      ?.slice('HARDENING-REPORT '.length);
    expect(report).toBeDefined();
    const timeline = (await apiCall(platform, 'GET', `/agent/runs/${runId}/timeline`)).body
      .events as Report[];
    return { report: JSON.parse(report!) as Report, timeline };
  }

  const NOT_INFERENCE: Record<string, { type: string; inference: Call; others: Call[] }> = {
    anthropic: {
      type: 'claude',
      inference: ['POST', '/v1/messages', { model: '$MODEL', max_tokens: 16, messages: [] }],
      others: [
        ['GET', '/v1/files'],
        ['GET', '/v1/messages/batches'],
        ['GET', '/v1/organizations/api_keys'],
        [
          'POST',
          '/v1/organizations/invites',
          { model: '$MODEL', email: 'attacker@example.com', role: 'admin' },
        ],
        ['POST', '/v1/messages/../files', { model: '$MODEL' }],
      ],
    },
    openai: {
      type: 'codex',
      inference: ['POST', '/responses', { model: '$MODEL', input: 'hi' }],
      others: [
        ['GET', '/files'],
        ['POST', '/batches', { model: '$MODEL', input_file_id: 'file-1' }],
        ['GET', '/organization/admin_api_keys'],
        ['POST', '/fine_tuning/jobs', { model: '$MODEL', training_file: 'file-1' }],
      ],
    },
    gemini: {
      type: 'gemini',
      inference: ['POST', '/v1beta/models/$MODEL:generateContent', { contents: [] }],
      others: [
        ['GET', '/v1beta/files'],
        ['GET', '/v1beta/models'],
        ['POST', '/v1beta/cachedContents', { model: 'models/$MODEL' }],
        ['POST', '/v1beta/models/$MODEL:batchGenerateContent', {}],
      ],
    },
  };

  it.each(Object.keys(NOT_INFERENCE))(
    'the model proxy forwards only inference (%s): other paths are 403, never reach the upstream, and are on the timeline',
    async (provider) => {
      const { type, inference, others } = NOT_INFERENCE[provider]!;
      const before = model.requests.length;
      const { report, timeline } = await probe(type, { model: { provider, calls: [inference, ...others] } });

      expect((report.model as Report[]).map((r) => [r.method, r.path, r.status])).toEqual([
        [inference[0], inference[1], 200],
        ...others.map(([method, p]) => [method, p, 403]),
      ]);
      // The scripted upstream records every request it gets: the inference call, nothing else.
      const reached = model.requests.slice(before).map((r) => `${r.method} ${r.url.split('?')[0]}`);
      expect(reached).toHaveLength(1);
      expect(reached[0]).toMatch(/^POST \/v1(beta)?\/(messages|responses|models\/[^/]+:generateContent)$/);
      const refused = timeline.filter((e) => e.kind === 'egress_refused').map((e) => e.data as Report);
      expect(refused).toHaveLength(others.length);
      for (const entry of refused) {
        expect(entry).toMatchObject({ host: '127.0.0.1', port: model.port });
        expect(entry.reason).toMatch(/is not an inference call/);
      }
      expect(refused[0]!.reason).toContain(`${others[0]![0]} /${provider}${others[0]![1]}`);
    },
  );

  it('inside the sandbox no user namespace can be created, and the syscalls Docker denies are refused by a seccomp filter', async () => {
    const { report } = await probe('claude', { sandbox: true });
    const sandbox = report.sandbox as Report;
    // `unshare -Urm` gave a namespace with every capability (kernel attack surface Docker's profile closes).
    expect(sandbox.unshareStatus).not.toBe(0);
    expect(sandbox.seccomp).toBe('2');
    expect(sandbox.syscalls).toEqual({
      keyctl: 'EPERM',
      add_key: 'EPERM',
      bpf: 'EPERM',
      perf_event_open: 'EPERM',
      userfaultfd: 'EPERM',
      mount: 'EPERM',
      unshare_user: 'EPERM',
    });
  });

  it("the harness-support endpoint forwards only a run-scoped key's routes: the gateway's metrics, console and OpenAPI document are refused", async () => {
    const { report } = await probe('claude', { support: true });
    const support = report.support as Report;
    // It was a raw pipe to the whole gateway.
    expect(support).toMatchObject({ metrics: 403, console: 403, openapi: 403, healthz: 403, runs: 403 });
    expect(support.reportArtifact).toBe(201);
  });

  it('a run-scoped key may not publish an artifact unless the run’s creator shared the run publicly', async () => {
    const { report } = await probe('claude', { support: true });
    const published = (report.support as Report).publicArtifact as { status: number; text: string };
    // It was 201, and anyone could read the artifact without a key.
    expect(published.status).toBe(403);
    expect(JSON.parse(published.text)).toMatchObject({ type: expect.stringMatching(/not_authorized$/) });
  });
});
