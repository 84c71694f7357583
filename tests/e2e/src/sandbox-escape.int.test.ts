import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';

// Issue 12: every run in its own sandbox. The real platform with the real runner on the local (bubblewrap) backend;
// a hostile command harness and a hostile setup command try each escape, and every attempt must fail where the
// run's conversation shows it. The same harness reaching an allow-listed host succeeds.

const FIXTURES = path.resolve(__dirname, '../fixtures');
const AGENT = path.join(FIXTURES, 'sandbox-escape-agent.js');
const ROOT = path.resolve(__dirname, '../../..');

type Probe = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the agent's free-form report

/** Every string anywhere in a JSON value (the conversation's messages, whatever their nesting). */
const stringsIn = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : value && typeof value === 'object'
      ? Object.values(value).flatMap(stringsIn)
      : [];

describe('run sandbox: escapes from a harness and a setup command', () => {
  let platform: RunningPlatform;
  let allowed: http.Server;
  let allowedUrl: string;
  let workspaceRoot: string;
  const marker = `escape-${randomUUID()}`;

  beforeAll(async () => {
    allowed = http.createServer((_req, res) => res.end('allow-listed host reached'));
    await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.1', resolve));
    const port = (allowed.address() as AddressInfo).port;
    allowedUrl = `http://127.0.0.1:${port}/`;
    workspaceRoot = path.join(os.tmpdir(), `conveyor-escape-${randomUUID()}`);
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'bubblewrap',
        WORKSPACE_ROOT: workspaceRoot,
        HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }),
        SANDBOX_READONLY_PATHS: FIXTURES,
        SANDBOX_INTERNAL_HOSTS: `127.0.0.1:${port}`,
        RUN_MAX_PROCESSES: '64',
        SANDBOX_MONITOR_INTERVAL_MS: '200',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    allowed?.closeAllConnections();
    allowed?.close();
  });

  const api = (method: string, urlPath: string, body?: unknown, key?: string) =>
    apiCall(platform, method, urlPath, body, key);
  /** The run's timeline entries (GET …/timeline). */
  const timelineOf = async (runId: string) =>
    (
      (await api('GET', `/agent/runs/${runId}/timeline`)).body as {
        events: Array<{ kind: string; data: Record<string, unknown> }>;
      }
    ).events;

  async function environment(setupCommands: string[]): Promise<string> {
    const created = await api('POST', '/agent/environments', {
      name: `escape ${randomUUID()}`,
      setup_commands: setupCommands,
    });
    expect(created.status).toBe(201);
    return created.body.uid as string;
  }

  it('denies every escape, shows the attempts on the timeline, and reaches the allow-listed host', async () => {
    // Another run's workspace and the platform's own files, as a run on this runner could name them.
    const otherWorkspaceFile = path.join(workspaceRoot, 'another-run', 'secret.txt');
    await mkdir(path.dirname(otherWorkspaceFile), { recursive: true });
    await writeFile(otherWorkspaceFile, 'another team secret');
    const other = await api('POST', '/agent/runs', {
      prompt: 'someone else',
      config: { harness: { type: 'demo' } },
    });
    const [pgPort, redisPort, kafkaPort] = [
      platform.databaseUrl,
      platform.env.REDIS_URL!,
      `x://${platform.env.KAFKA_BROKERS!.split(',')[0]!}`,
    ].map((u) => Number(new URL(u).port));
    const target = {
      otherWorkspaceFile,
      workspaceRoot,
      runnerFile: path.join(ROOT, 'services/runner/dist/main.js'),
      conveyorDir: path.join(ROOT, '.conveyor'),
      // The platform's CA, the runner's TLS certificate and key.
      pkiDir: platform.trust.pkiDir,
      ports: {
        postgres: pgPort,
        redis: redisPort,
        kafka: kafkaPort,
        grpc: Number(platform.orchestratorGrpcAddr.split(':').pop()),
      },
      allowedUrl,
      marker,
      otherRunId: other.body.run_id as string,
    };
    const envId = await environment([
      `${process.execPath} ${AGENT} --setup '${JSON.stringify(target)}' > setup-report.json`,
    ]);

    const created = await api('POST', '/agent/runs', {
      prompt: JSON.stringify(target),
      config: { harness: { type: 'claude' }, environment_id: envId },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 90_000);
    expect(done.state).toBe('SUCCEEDED');

    const conversationBody = (await api('GET', `/agent/runs/${runId}/conversation`)).body;
    const reportText = stringsIn(conversationBody).find((s) => s.startsWith('ESCAPE-REPORT '));
    expect(reportText).toBeDefined();
    const report = JSON.parse(reportText!.slice('ESCAPE-REPORT '.length)) as Probe;

    for (const probe of [report, report.setup as Probe]) {
      expect(probe.platformEnv).toEqual([]);
      expect(probe.procEnvironsWithDatabaseUrl).toEqual([]);
      expect(probe.pid1Environ).toBe('clean');
      expect(probe.otherWorkspace).toBe('ENOENT');
      expect(probe.workspaceRoot).toBe('ENOENT');
      expect(probe.runnerFile).toBe('ENOENT');
      expect(probe.conveyorDir).toBe('ENOENT');
      expect(probe.runnerKeys).toBe('ENOENT');
      expect(probe.rootHome).toBe('ENOENT');
      for (const port of Object.keys(target.ports)) {
        expect([port, probe.tcp[port]]).toEqual([port, 'ECONNREFUSED']);
        expect([port, probe.proxied[port]]).toEqual([port, 403]);
      }
      expect(probe.tcp.metadata).toBe('ENETUNREACH');
      expect(probe.proxied.metadata).toBe(403);
      expect(probe.writes).toEqual({ usr: 'EROFS', etc: 'EROFS', root: 'EROFS', tmp: 'ok' });
      expect(probe.identity.uid).toBeGreaterThan(0);
      expect(probe.identity.euid).toBe(probe.identity.uid);
      expect(probe.identity.capEff).toMatch(/^0+$/);
      expect(probe.identity.noNewPrivs).toBe('1');
      expect(probe.identity.sudo).toBe('failed');
      expect(probe.identity.su).toBe('failed');
      expect(probe.allowed).toEqual({ status: 200, text: 'allow-listed host reached' });
    }
    // The private /tmp never reached the host's.
    expect(existsSync(path.join(os.tmpdir(), marker))).toBe(false);

    // The run-scoped key: its own run's harness support only, nothing else, and dead once the run has ended.
    expect(report.api).toEqual({ listRuns: 403, otherRun: 403, createRun: 403, ownArtifact: 201 });
    const key = report.key as string;
    expect(key).toBeTruthy();
    expect(
      (
        await api(
          'POST',
          '/harness-support/report-artifact',
          { artifact_type: 'PLAN', data: { title: 'late', content: 'x' } },
          key,
        )
      ).status,
    ).toBe(401);
    expect((await api('GET', `/agent/runs/${runId}`, undefined, key)).status).toBe(401);

    // The refused connections and the disk the workspace used are on the run's timeline, not only in the agent's report.
    const timeline = await timelineOf(runId);
    const refused = timeline
      .filter((e) => e.kind === 'egress_refused')
      .map((e) => `${String(e.data.host)}:${String(e.data.port)}`);
    expect(refused).toEqual(expect.arrayContaining([`127.0.0.1:${pgPort}`, '169.254.169.254:80']));
    const released = timeline.filter((e) => e.kind === 'workspace_released').map((e) => e.data);
    expect(released).toEqual(expect.arrayContaining([expect.objectContaining({ kept_for_debug: false })]));
    for (const r of released) expect(r.disk_bytes).toBeGreaterThan(0);
    // The workspace is gone with the run.
    expect(existsSync(path.join(workspaceRoot, runId))).toBe(false);
  }, 150_000);

  it('lets an environment allow more hosts than the installation, and never a private address through them', async () => {
    // A setup command asks the sandbox's egress proxy for http://localhost:9/. Environment A allows `localhost`: the
    // allow-list lets it pass and the address check still refuses it (loopback). Environment B does not list it.
    const probe = `${process.execPath} -e "const u=new URL(process.env.HTTP_PROXY);require('http').get({host:u.hostname,port:u.port,path:'http://localhost:9/'},()=>{}).on('error',()=>{})"`;
    const refusals = async (allowedHosts: string[] | undefined) => {
      const env = await api('POST', '/agent/environments', {
        name: `egress ${randomUUID()}`,
        setup_commands: [probe],
        ...(allowedHosts ? { allowed_hosts: allowedHosts } : {}),
      });
      expect(env.status).toBe(201);
      const run = await api('POST', '/agent/runs', {
        prompt: '{}',
        config: { harness: { type: 'claude' }, environment_id: env.body.uid as string },
      });
      expect(run.body).toMatchObject({ run_id: expect.any(String) });
      await waitForRunState(platform, run.body.run_id as string, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000);
      const timeline = await timelineOf(run.body.run_id as string);
      return timeline
        .filter((e) => e.kind === 'egress_refused' && e.data.host === 'localhost')
        .map((e) => String(e.data.reason));
    };
    expect(await refusals(['localhost'])).toEqual([expect.stringMatching(/^resolves to non-public address/)]);
    expect(await refusals(undefined)).toEqual(['host not on the allow-list']);
    // Addresses are not host names: an environment cannot list one.
    expect(
      (await api('POST', '/agent/environments', { name: 'by address', allowed_hosts: ['169.254.169.254'] }))
        .status,
    ).toBe(400);
  }, 150_000);

  it('ends a setup command that forks without bound with the process limit', async () => {
    const envId = await environment(['while :; do sleep 60 & done']);
    const created = await api('POST', '/agent/runs', {
      prompt: 'never reached',
      config: { harness: { type: 'claude' }, environment_id: envId },
    });
    const done = await waitForRunState(
      platform,
      created.body.run_id as string,
      ['SUCCEEDED', 'FAILED', 'ERROR'],
      60_000,
    );
    expect(done.state).toBe('FAILED');
    expect(done.status_message).toMatchObject({
      error_code: 'budget_exceeded',
      message: expect.stringMatching(/process limit \(64\)/),
    });
    const timeline = await timelineOf(created.body.run_id as string);
    expect(timeline.filter((e) => e.kind === 'workspace_released').map((e) => e.data)).toEqual([
      expect.objectContaining({ limit: 'processes', kept_for_debug: false }),
    ]);
  }, 90_000);
});
