import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { apiCall, type RunningPlatform, type ScriptedModelServer } from '@conveyor/testing';
import { FIXTURES, startHardeningPlatform, stringsIn } from './hardening-platform';

// Issue 34, items 2–4 (docs/security.md, "Third pass: the sandbox and the model proxy"): sockets in families Docker
// refuses (vsock), a setup command that freezes its sandbox's init or hangs, and query strings through the model
// proxy. A hostile command harness (fixtures/run-hardening-agent.js) and setup commands probe from inside real
// bubblewrap runs of the real runner; the scripted model server records what reaches the upstream.
jest.setTimeout(240_000);

const INIT_PROBE = path.join(FIXTURES, 'init-probe.py');
const PROVIDER_KEY = `sk-third-pass-${randomUUID()}`;

type Report = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the agent's free-form report
type Call = [method: string, path: string, body?: unknown];

/** Host processes whose command line is exactly `argv` (what a killed sandbox must not leave behind). */
async function processesRunning(argv: string[]): Promise<number[]> {
  const wanted = `${argv.join('\0')}\0`;
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === wanted) pids.push(Number(entry));
  }
  return pids;
}

describe('issue 34: no vsock or exotic sockets, an init no run can freeze, setup deadlines, and only inference query keys', () => {
  let platform: RunningPlatform;
  let model: ScriptedModelServer;

  beforeAll(async () => {
    ({ platform, model } = await startHardeningPlatform(PROVIDER_KEY));
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  });

  const api = (method: string, urlPath: string, body?: unknown) => apiCall(platform, method, urlPath, body);

  /** Starts a run of the agent as harness `type` with `probes` as its prompt; its ended state, message and report. */
  async function run(
    probes: Report,
    options: { type?: string; environmentId?: string } = {},
  ): Promise<{ runId: string; state: string; message: string; report?: Report; timeline: Report[] }> {
    const created = await api('POST', '/agent/runs', {
      prompt: JSON.stringify(probes),
      config: {
        harness: { type: options.type ?? 'claude' },
        ...(options.environmentId ? { environment_id: options.environmentId } : {}),
      },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    // Far below the run's one-hour wall clock: a run that only that clock would end fails here.
    for (const deadline = Date.now() + 150_000; ;) {
      const body = (await api('GET', `/agent/runs/${runId}`)).body;
      if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(body.state as string)) {
        const conversation = (await api('GET', `/agent/runs/${runId}/conversation`)).body;
        const report = stringsIn(conversation)
          .find((s) => s.startsWith('HARDENING-REPORT '))
          ?.slice('HARDENING-REPORT '.length);
        const timeline = (await api('GET', `/agent/runs/${runId}/timeline`)).body.events as Report[];
        return {
          runId,
          state: body.state as string,
          message: stringsIn(body.status_message).join(' '),
          report: report ? (JSON.parse(report) as Report) : undefined,
          timeline,
        };
      }
      if (Date.now() > deadline)
        throw new Error(`run ${runId} still ${body.state as string}\n${platform.logs().slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async function environment(setupCommands: string[], extra: Report = {}): Promise<string> {
    const created = await api('POST', '/agent/environments', {
      name: `third pass ${randomUUID()}`,
      setup_commands: setupCommands,
      snapshot: false,
      ...extra,
    });
    expect(created.status).toBe(201);
    return created.body.uid as string;
  }

  describe('item 2: address families', () => {
    it('socket() in AF_VSOCK and every family but unix, inet, inet6 and netlink is refused by the filter', async () => {
      const { state, report } = await run({ families: true });
      expect(state).toBe('SUCCEEDED');
      const families = report!.families as Record<string, string>;
      // It gave a descriptor: vsock reaches the hypervisor's services on a virtual machine.
      expect(families['40']).toBe('EPERM');
      expect(families.vsock_wide).toBe('EPERM');
      for (const [family, outcome] of Object.entries(families)) {
        if (['1', '2', '10', '16'].includes(family)) expect([family, outcome]).toEqual([family, 'ok']);
        else expect([family, outcome]).toEqual([family, 'EPERM']);
      }
    });
  });

  describe("item 3: the sandbox's init and setup deadlines", () => {
    it('a setup command cannot stop or rewrite the init (SIGSTOP to 1 and -1, ptrace, process_vm_writev, /proc/1/mem) and the run goes on', async () => {
      const environmentId = await environment(
        [
          // Signals first: init ignores its own namespace's SIGSTOP; -1 stops only the step's neighbours, and
          // the step's end takes its whole PID namespace down.
          'kill -STOP 1; kill -STOP -1; true',
          `/usr/bin/python3 ${INIT_PROBE} > /workspace/init-probe.json`,
        ],
        { setup_timeout_seconds: 20 },
      );
      const { state, message, report } = await run(
        { file: '/workspace/init-probe.json', script: INIT_PROBE },
        { environmentId },
      );
      // It sat PENDING until the run's timeout: the attach left init stopped.
      expect([state, message]).toEqual(['SUCCEEDED', expect.anything()]);
      const refused = {
        ptrace_attach: 'EPERM',
        ptrace_seize: 'EPERM',
        ptrace_attach_wide_pid: 'EPERM',
        process_vm_writev: 'EPERM',
        proc_mem: 'EROFS',
        proc_task_mem: 'EROFS',
        // The kernel protects a PID namespace's init from its own namespace's signals: ignored, not refused.
        sigstop: 'ok',
        pidfd_getfd: 'EPERM',
        kcmp: 'EPERM',
        init_state: 'S',
      };
      expect(report!.file).toEqual(refused); // from the setup command
      expect(report!.script).toEqual(refused); // from the agent
    });

    it.each([
      ['a hung setup', 'sleep 7213', ['sleep', '7213']],
      [
        'a setup that stops itself (its sandbox never reports an end)',
        'sleep 7214 & kill -STOP $$',
        ['sleep', '7214'],
      ],
      [
        'a setup that leaves a daemon holding its output',
        '(setsid sleep 7215 &) ; sleep 7216',
        ['sleep', '7215'],
      ],
      ['a setup that ignores SIGTERM', "trap '' TERM; sleep 7217 & wait", ['sleep', '7217']],
    ])(
      '%s ends FAILED at the setup deadline, naming the step, with nothing of it left running',
      async (_name, command, leftover) => {
        const environmentId = await environment(['true', command], { setup_timeout_seconds: 5 });
        const { state, message, timeline } = await run({}, { environmentId });
        expect(state).toBe('FAILED');
        expect(message).toContain(
          `Setup step timed out after 5 s (the environment's setup_timeout_seconds) and was stopped: ${command}`,
        );
        const failedStep = timeline.find(
          (e) => e.kind === 'setup_step' && JSON.stringify(e).includes('"failed"'),
        );
        expect(JSON.stringify(failedStep)).toContain(command);
        expect(await processesRunning(leftover)).toEqual([]);
      },
    );

    it.each([0, 4, 3601, 1.5, '60'])('setup_timeout_seconds %p is refused (400)', async (value) => {
      const created = await api('POST', '/agent/environments', {
        name: `bounds ${randomUUID()}`,
        setup_timeout_seconds: value,
      });
      expect(created.status).toBe(400);
      expect(JSON.stringify(created.body)).toContain('setup_timeout_seconds');
    });

    it.each([5, 3600, null])('setup_timeout_seconds %p is accepted and shown', async (value) => {
      const created = await api('POST', '/agent/environments', {
        name: `bounds ${randomUUID()}`,
        setup_timeout_seconds: value,
      });
      expect(created.status).toBe(201);
      expect((created.body.config as Report).setup_timeout_seconds).toBe(value);
    });

    it('PUT changes setup_timeout_seconds, keeps it when omitted, clears it with null and refuses it out of bounds', async () => {
      const id = await environment(['true'], { setup_timeout_seconds: 30 });
      const shown = async () =>
        ((await api('GET', `/agent/environments/${id}`)).body.config as Report)
          .setup_timeout_seconds as unknown;
      expect((await api('PUT', `/agent/environments/${id}`, { setup_timeout_seconds: 45 })).status).toBe(200);
      expect(await shown()).toBe(45);
      expect((await api('PUT', `/agent/environments/${id}`, { description: 'kept' })).status).toBe(200);
      expect(await shown()).toBe(45);
      expect((await api('PUT', `/agent/environments/${id}`, { setup_timeout_seconds: 0 })).status).toBe(400);
      expect((await api('PUT', `/agent/environments/${id}`, { setup_timeout_seconds: null })).status).toBe(
        200,
      );
      expect(await shown()).toBeNull();
    });
  });

  describe('item 4: query strings through the model proxy', () => {
    const CASES: Record<string, { type: string; allowed: Call; refused: string[]; reached: RegExp }> = {
      anthropic: {
        type: 'claude',
        allowed: ['POST', '/v1/messages?beta=true', { model: '$MODEL', max_tokens: 16, messages: [] }],
        refused: [
          '/v1/messages?beta=true&foo=bar',
          '/v1/messages?beta=false',
          '/v1/messages?beta=true&beta=true',
          '/v1/messages?key=sk-attacker',
          '/v1/messages?%62eta=true&%62eta=true',
        ],
        reached: /^\/v1\/messages\?beta=true$/,
      },
      openai: {
        type: 'codex',
        allowed: ['POST', '/responses', { model: '$MODEL', input: 'hi' }],
        refused: ['/responses?api-version=2024-01-01', '/responses?stream=true'],
        reached: /^\/v1\/responses$/,
      },
      gemini: {
        type: 'gemini',
        allowed: ['POST', '/v1beta/models/$MODEL:streamGenerateContent?alt=sse&key=unused', { contents: [] }],
        refused: [
          '/v1beta/models/$MODEL:streamGenerateContent?alt=media',
          '/v1beta/models/$MODEL:streamGenerateContent?alt=sse&alt=json',
          '/v1beta/models/$MODEL:streamGenerateContent?alt=sse&key=a&key=b',
          '/v1beta/models/$MODEL:streamGenerateContent?%24alt=media',
          '/v1beta/models/$MODEL:generateContent?uploadType=resumable',
          '/v1beta/models/$MODEL:generateContent?fields=candidates',
        ],
        reached: /^\/v1beta\/models\/[^/?]+:streamGenerateContent\?alt=sse$/,
      },
    };

    it.each(Object.keys(CASES))(
      '%s: only the query keys its inference calls use reach the upstream; the rest are 403 and on the timeline',
      async (provider) => {
        const { type, allowed, refused, reached } = CASES[provider]!;
        const calls: Call[] = [allowed, ...refused.map((p): Call => ['POST', p, allowed[2]])];
        const before = model.requests.length;
        const { state, report, timeline } = await run({ model: { provider, calls } }, { type });
        expect(state).toBe('SUCCEEDED');
        expect((report!.model as Report[]).map((r) => [r.path, r.status])).toEqual([
          [allowed[1], 200],
          ...refused.map((p) => [p, 403]),
        ]);
        // They went through with the real key: other keys, encoded or repeated, changed what the upstream did.
        const seen = model.requests.slice(before).map((r) => r.url);
        expect(seen).toEqual([expect.stringMatching(reached)]);
        const reasons = timeline
          .filter((e) => e.kind === 'egress_refused')
          .map((e) => (e.data as Report).reason as string);
        expect(reasons).toHaveLength(refused.length);
        for (const reason of reasons) expect(reason).toMatch(/query parameter .* (is repeated|is not one)/);
      },
    );
  });
});
