import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiCall, startPlatform, type Json, type RunningPlatform } from '@conveyor/testing';

jest.setTimeout(180_000);

// Issue 23: the run boundary, second pass. The real platform and runner on the local (bubblewrap) backend, attacked
// from a run's setup command as the reproductions do.

const DISK_MB = 64;

type TimelineEvent = { kind: string; data: Record<string, unknown> };

describe('finding 8: the run boundary — no writes through a run’s links, a disk limit that counts every byte', () => {
  let platform: RunningPlatform;
  let workspaceRoot: string;

  beforeAll(async () => {
    workspaceRoot = path.join(os.tmpdir(), `conveyor-boundary-${randomUUID()}`);
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'bubblewrap',
        WORKSPACE_ROOT: workspaceRoot,
        SANDBOX_STATE_DIR: path.join(os.tmpdir(), `conveyor-boundary-state-${randomUUID()}`),
        RUN_DISK_MB: String(DISK_MB),
        SANDBOX_MONITOR_INTERVAL_MS: '200',
      },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  const api = (method: string, urlPath: string, body?: unknown) => apiCall(platform, method, urlPath, body);
  const timelineOf = async (runId: string): Promise<TimelineEvent[]> =>
    ((await api('GET', `/agent/runs/${runId}/timeline`)).body as { events: TimelineEvent[] }).events;

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
      const value = await probe();
      if (value !== undefined) return value;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what} did not happen\n${platform.logs().slice(-4000)}`);
  }

  const runState = (runId: string) =>
    until(`run ${runId} ending`, async () => {
      const run = (await api('GET', `/agent/runs/${runId}`)).body as Json;
      return ['FAILED', 'SUCCEEDED', 'ERROR', 'CANCELLED'].includes(run.state as string) ? run : undefined;
    });

  async function runWithSetup(setupCommand: string, extra: Record<string, unknown> = {}): Promise<string> {
    const env = await api('POST', '/agent/environments', {
      name: `boundary ${randomUUID()}`,
      setup_commands: [setupCommand],
    });
    expect(env.status).toBe(201);
    const created = await api('POST', '/agent/runs', {
      prompt: 'probe',
      config: { environment_id: env.body.uid as string },
      ...extra,
    });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  }

  it('a debug follow-up writes attachments inside the sandbox: a planted link never reaches a root-only host file', async () => {
    // Root-only host files, as cron, authorized_keys or the runner's own dist/ would be.
    const hostDir = path.join('/root', `conveyor-finding-8-${randomUUID()}`);
    await mkdir(hostDir, { mode: 0o700 });
    const rootOnly = path.join(hostDir, 'root-only');
    const missing = path.join(hostDir, 'created-by-the-runner');
    await writeFile(rootOnly, 'original\n', { mode: 0o600 });
    try {
      const attachment = (file_name: string) => ({
        file_name,
        mime_type: 'image/png',
        data: Buffer.from(`attacker bytes for ${file_name}\n`).toString('base64'),
      });
      const runId = await runWithSetup(
        `cd /workspace/attachments && rm -f a.txt b.txt && ln -s ${rootOnly} a.txt && ln -s ${missing} b.txt; exit 1`,
        { attachments: [attachment('a.txt'), attachment('b.txt')] },
      );
      const failed = await runState(runId);
      expect(failed.state).toBe('FAILED');
      expect((failed.status_message as Json).error_code).toBe('environment_setup_failed');

      const followup = await api('POST', `/agent/runs/${runId}/followups`, {
        message: 'why did setup fail?',
      });
      expect(followup.status).toBe(200);
      expect(followup.body.routed_to).toBe('debug_session');
      // The debug execution has laid out the kept workspace again (and released it) once a second release is recorded.
      await until('the debug execution', async () => {
        const released = (await timelineOf(runId)).filter((e) => e.kind === 'workspace_released');
        return released.length >= 2 ? released : undefined;
      });

      expect(await readFile(rootOnly, 'utf8')).toBe('original\n');
      expect(existsSync(missing)).toBe(false);
    } finally {
      await rm(hostDir, { recursive: true, force: true });
    }
  });

  it('an open unlinked file cannot fill the host: the run ends budget_exceeded at its disk limit', async () => {
    const limit = DISK_MB * 1024 * 1024;
    const hostFree = async () => {
      const fs = await statfs(os.tmpdir());
      return fs.bavail * fs.bsize;
    };
    const freeBefore = await hostFree();
    // The fill, holding the space afterwards as an attacker keeping it would (a fill freed again within one
    // monitor interval only ever meets ENOSPC: docs/sandbox.md).
    const runId = await runWithSetup(
      `exec 3>/workspace/h; rm /workspace/h; dd if=/dev/zero bs=1M count=${DISK_MB * 16} >&3; sleep 60`,
    );
    // While it runs: the host's free space and the run's image file (its filesystem), sampled until the run ends.
    const image = path.join(workspaceRoot, '.images', `${runId}.img`);
    let mostGrown = 0;
    let largestImage = 0;
    let ended: Json | undefined;
    while (!ended) {
      mostGrown = Math.max(mostGrown, freeBefore - (await hostFree()));
      const allocated = await stat(image).then(
        (s) => s.blocks * 512,
        () => 0,
      );
      largestImage = Math.max(largestImage, allocated);
      const run = (await api('GET', `/agent/runs/${runId}`)).body as Json;
      if (['FAILED', 'SUCCEEDED', 'ERROR'].includes(run.state as string)) ended = run;
    }
    expect(ended.state).toBe('FAILED');
    expect((ended.status_message as Json).error_code).toBe('budget_exceeded');
    expect(String((ended.status_message as Json).message)).toMatch(/disk limit \(64 MiB\)/);
    const released = (await timelineOf(runId)).filter((e) => e.kind === 'workspace_released');
    expect(released.map((e) => e.data)).toEqual([
      expect.objectContaining({ limit: 'disk', kept_for_debug: false }),
    ]);
    // The run's bytes live in its image, which never holds more than the limit; the host grew by that at most (the
    // margin is for other processes writing to the same disk meanwhile: the fill asked for 16 times the limit).
    expect(largestImage).toBeGreaterThan(0);
    expect(largestImage).toBeLessThanOrEqual(limit);
    expect(mostGrown).toBeLessThan(2 * limit);
    expect(existsSync(image)).toBe(false);
  });

  it('the runner is not root: uid ≠ 0 and no capabilities; only its small privileged helper is', async () => {
    // The platform's runner, found by its queue (unique to this platform) in its environment.
    const queue = `RUN_QUEUE=${platform.env.RUN_QUEUE!}\0`;
    const status = async (pid: string) => readFile(`/proc/${pid}/status`, 'utf8');
    const field = (text: string, name: string) =>
      new RegExp(`^${name}:[\\t ]*(.*)$`, 'm').exec(text)?.[1] ?? '';
    const pids = (await readdir('/proc')).filter((e) => /^\d+$/.test(e));
    const runner = await until('the runner process', async () => {
      for (const pid of pids) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
        if (cmdline.includes('services/runner/dist/main.js') && environ.includes(queue)) return pid;
      }
      return undefined;
    });
    const own = await status(runner);
    expect(field(own, 'Uid').split('\t').map(Number)).not.toContain(0);
    expect(field(own, 'Gid').split('\t').map(Number)).not.toContain(0);
    expect(field(own, 'Groups')).toBe('');
    expect(field(own, 'CapEff')).toMatch(/^0+$/);
    expect(field(own, 'CapPrm')).toMatch(/^0+$/);
    // Its one root child is the helper.
    const children = [];
    for (const pid of pids) {
      const text = await status(pid).catch(() => '');
      if (field(text, 'PPid') === runner) children.push({ pid, text });
    }
    const rootChildren = children.filter((c) => field(c.text, 'Uid').split('\t')[0] === '0');
    expect(rootChildren).toHaveLength(1);
    expect(await readFile(`/proc/${rootChildren[0]!.pid}/cmdline`, 'utf8')).toContain(
      'sandbox/bwrap/privileged/helper-main.js',
    );
  });
});
