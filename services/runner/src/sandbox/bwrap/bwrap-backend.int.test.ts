import { execFileSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import { BwrapBackend } from './bwrap-backend';
import { collectBytes } from '../collect-output';
import { PrivilegedHelper } from './privileged/helper-client';
import type { RunSandbox, SandboxPolicy } from '../run-sandbox';

// The real bubblewrap backend on this machine: every assertion is about what a process inside can or cannot do. Its
// privileged helper is forked from the build (`npm run build` first); this test process stays root.
const HELPER_FROM_BUILD = path.resolve(__dirname, '../../../dist/sandbox/bwrap/privileged/helper-main.js');

const limits = {
  wallClockMs: 60_000,
  maxProcesses: 64,
  memoryBytes: 512 * 1024 * 1024,
  diskBytes: 50 * 1024 * 1024,
};

async function run(sandbox: RunSandbox, script: string, env: Record<string, string> = {}) {
  const proc = sandbox.exec({ argv: ['/bin/sh', '-c', script], env: { PATH: '/usr/bin:/bin', ...env } });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = await proc.exited;
  return { ...exit, stdout: stdout.trim(), stderr };
}

describe('BwrapBackend (real bubblewrap)', () => {
  let root: string;
  let backend: BwrapBackend;
  let helper: PrivilegedHelper;
  let allowed: http.Server;
  let allowedPort: number;
  const egress: Array<{ host: string; allowed: boolean }> = [];

  const policy = async (overrides: Partial<SandboxPolicy> = {}): Promise<SandboxPolicy> => {
    return {
      runId: randomUUID(),
      allowedHosts: [],
      endpoints: [],
      limits,
      onEgress: (e) => egress.push(e),
      ...overrides,
    };
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'bwrap-backend-'));
    await chmod(root, 0o711); // runs' uids traverse it to reach their workspace, as they do WORKSPACE_ROOT
    allowed = http.createServer((_req, res) => res.end('hello from the allowed host'));
    await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.1', resolve));
    allowedPort = (allowed.address() as net.AddressInfo).port;
    helper = await PrivilegedHelper.start(
      {
        workspaceRoot: path.join(root, 'workspaces'),
        stateDir: path.join(root, 'state'),
        readOnlyPaths: [],
        bwrapPath: execFileSync('sh', ['-c', 'command -v bwrap']).toString().trim(),
        runnerUid: 0,
        runnerGid: 0,
        snapshots: { maxAgeMs: 3_600_000, maxBytes: 1 << 30 },
      },
      () => undefined,
      HELPER_FROM_BUILD,
    );
    backend = new BwrapBackend({
      helper,
      readOnlyPaths: [],
      internalHosts: [`127.0.0.1:${allowedPort}`],
      stateDir: path.join(root, 'state'),
      workspaceRoot: path.join(root, 'workspaces'),
      monitorIntervalMs: 200,
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
    await backend.check();
  });

  afterAll(async () => {
    helper.stop();
    allowed.closeAllConnections();
    allowed.close();
    await rm(root, { recursive: true, force: true });
  });

  it('runs as an unprivileged uid with no capabilities, its own /proc and only the environment it is given', async () => {
    const sandbox = await backend.prepare(await policy());
    process.env.SANDBOX_TEST_SECRET = 'platform-secret';
    const result = await run(
      sandbox,
      'id -u; grep CapEff /proc/self/status; tr "\\0" " " < /proc/1/cmdline; echo; env | sort',
      { MINE: 'yes' },
    );
    delete process.env.SANDBOX_TEST_SECRET;
    const [uid, caps, pid1, ...env] = result.stdout.split('\n');
    expect(Number(uid)).toBeGreaterThan(0);
    expect(caps).toMatch(/CapEff:\s+0+$/);
    expect(pid1).toMatch(/bwrap/);
    expect(env).toContain('MINE=yes');
    expect(result.stdout).not.toContain('platform-secret');
    expect(result.stdout).not.toContain('DATABASE_URL');
    await sandbox.destroy();
  });

  it('sees its workspace read-write and nothing else of the host writable or visible', async () => {
    const other = await policy();
    const otherSandbox = await backend.prepare(other);
    const otherDir = path.join(root, 'workspaces', other.runId);
    await writeFile(path.join(otherDir, 'secret.txt'), 'other run');
    const mine = await policy();
    const sandbox = await backend.prepare(mine);
    const result = await run(
      sandbox,
      [
        'echo data > /workspace/mine.txt && echo ws-ok',
        `cat ${otherDir}/secret.txt 2>/dev/null || echo other-hidden`,
        `ls ${root} 2>/dev/null || echo root-hidden`,
        'ls /root 2>/dev/null || echo home-hidden',
        'touch /usr/bin/x 2>/dev/null || echo usr-ro',
        'touch /etc/x 2>/dev/null || echo etc-ro',
        'node -e "process.stdout.write(\'node-ok\')"; echo',
        'git --version >/dev/null && echo git-ok',
      ].join('\n'),
    );
    expect(result.stdout.split('\n')).toEqual([
      'ws-ok',
      'other-hidden',
      'root-hidden',
      'home-hidden',
      'usr-ro',
      'etc-ro',
      'node-ok',
      'git-ok',
    ]);
    expect(await readFile(path.join(root, 'workspaces', mine.runId, 'mine.txt'), 'utf8')).toBe('data\n');
    const usage = await sandbox.destroy();
    expect(usage.diskBytes).toBeGreaterThan(0);
    await otherSandbox.destroy();
  });

  it('has no route to the host network; egress goes through the filter, endpoints are forwarded', async () => {
    const endpoint = http.createServer((_req, res) => res.end('endpoint says hi'));
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const sandbox = await backend.prepare(
      await policy({
        allowedHosts: ['example.invalid'],
        endpoints: [
          {
            name: 'model-proxy',
            target: { host: '127.0.0.1', port: (endpoint.address() as net.AddressInfo).port },
          },
        ],
      }),
    );
    const probe = `
      const net = require('node:net'); const http = require('node:http');
      const tcp = (host, port) => new Promise((r) => { const s = net.connect(port, host); s.setTimeout(3000);
        s.on('connect', () => { s.destroy(); r('open'); }); s.on('error', (e) => r(e.code)); s.on('timeout', () => { s.destroy(); r('timeout'); }); });
      const viaProxy = (target) => new Promise((r) => { const req = http.request({ host: '127.0.0.1', port: 3128, method: 'CONNECT', path: target });
        req.on('connect', (res, sock) => { sock.destroy(); r(String(res.statusCode)); }); req.on('error', (e) => r(e.code)); req.end(); });
      const get = (url, proxied) => new Promise((r) => { const u = new URL(url);
        const opts = proxied ? { host: '127.0.0.1', port: 3128, path: url } : { host: u.hostname, port: u.port, path: u.pathname };
        http.get(opts, (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => r(res.statusCode + ' ' + b.trim())); }).on('error', (e) => r(e.code)); });
      (async () => {
        console.log(JSON.stringify({
          postgres: await tcp('127.0.0.1', 5432),
          metadata: await tcp('169.254.169.254', 80),
          proxiedPostgres: await viaProxy('127.0.0.1:5432'),
          proxiedMetadata: await viaProxy('169.254.169.254:80'),
          allowed: await get('http://127.0.0.1:${allowedPort}/', true),
          endpoint: await get(process.env.ENDPOINT + '/', false),
        }));
      })();`;
    const result = await run(sandbox, 'node -e "$PROBE"', {
      PROBE: probe,
      ENDPOINT: sandbox.endpointUrl('model-proxy'),
    });
    expect(JSON.parse(result.stdout)).toEqual({
      postgres: 'ECONNREFUSED',
      metadata: 'ENETUNREACH',
      proxiedPostgres: '403',
      proxiedMetadata: '403',
      allowed: '200 hello from the allowed host',
      endpoint: '200 endpoint says hi',
    });
    expect(egress).toEqual(
      expect.arrayContaining([
        { host: '127.0.0.1', port: 5432, allowed: false, reason: 'host not on the allow-list' },
      ]),
    );
    await sandbox.destroy();
    endpoint.closeAllConnections();
    endpoint.close();
  });

  it('gives a command run without network neither the egress filter nor the endpoints', async () => {
    const endpoint = http.createServer((_req, res) => res.end('endpoint says hi'));
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const sandbox = await backend.prepare(
      await policy({
        allowedHosts: ['127.0.0.1'],
        endpoints: [
          {
            name: 'model-proxy',
            target: { host: '127.0.0.1', port: (endpoint.address() as net.AddressInfo).port },
          },
        ],
      }),
    );
    const probe = `
      const net = require('node:net');
      const tcp = (port) => new Promise((r) => { const s = net.connect(port, '127.0.0.1');
        s.on('connect', () => { s.destroy(); r('open'); }); s.on('error', (e) => r(e.code)); });
      (async () => console.log(JSON.stringify([await tcp(3128), await tcp(Number(process.env.PORT))])))();`;
    const port = new URL(sandbox.endpointUrl('model-proxy')).port;
    const exec = (network: boolean) =>
      collectBytes(
        sandbox.exec({
          argv: ['node', '-e', probe],
          env: { PATH: '/usr/bin:/bin', PORT: port },
          network,
        }),
      ).then((r) => JSON.parse(r.stdout.toString()) as string[]);
    expect(await exec(false)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    expect(await exec(true)).toEqual(['open', 'open']);
    await sandbox.destroy();
    endpoint.closeAllConnections();
    endpoint.close();
  });

  it('ends a fork bomb with the processes limit', async () => {
    const sandbox = await backend.prepare(await policy({ limits: { ...limits, maxProcesses: 32 } }));
    const result = await run(sandbox, 'while true; do sleep 30 & done');
    expect(result.limit).toBe('processes');
    await sandbox.destroy();
  });

  it('ends the run at the wall-clock limit, and refuses to exec afterwards', async () => {
    const sandbox = await backend.prepare(await policy({ limits: { ...limits, wallClockMs: 1500 } }));
    expect((await run(sandbox, 'sleep 60')).limit).toBe('timeout');
    expect((await run(sandbox, 'echo again')).limit).toBe('timeout');
    await sandbox.destroy();
  });

  it.each([
    ['a file', 'head -c 20000000 /dev/zero > /workspace/big; sleep 60'],
    [
      'an open unlinked file',
      'exec 3>/workspace/h; rm /workspace/h; head -c 20000000 /dev/zero >&3; sleep 60',
    ],
    [
      'hard links and a sparse file',
      'head -c 9000000 /dev/zero > a; ln a b; truncate -s 1G s; head -c 9000000 /dev/zero > c; sleep 60',
    ],
  ])(
    'ends the run when %s outgrows its filesystem, which holds no more than the limit',
    async (_, script) => {
      const p = await policy({ limits: { ...limits, diskBytes: 16 * 1024 * 1024 } });
      const sandbox = await backend.prepare(p);
      const image = path.join(root, 'workspaces', '.images', `${p.runId}.img`);
      const result = await run(sandbox, script);
      expect(result.limit).toBe('disk');
      expect((await stat(image)).blocks * 512).toBeLessThanOrEqual(16 * 1024 * 1024);
      const usage = await sandbox.destroy();
      expect(usage.limit).toBe('disk');
      await expect(stat(image)).rejects.toThrow(/ENOENT/);
    },
  );

  it('keeps a workspace for a debug session: the same files and owner when it is prepared again', async () => {
    const p = await policy();
    const first = await backend.prepare(p);
    const before = await run(first, 'echo kept > /workspace/f; id -u');
    await first.destroy({ keepWorkspace: true });
    const again = await backend.prepare(p);
    const after = await run(again, 'cat /workspace/f; id -u; stat -c %u /workspace/f');
    expect(after.stdout.split('\n')).toEqual(['kept', before.stdout, before.stdout]);
    await again.destroy();
    await expect(readdir(path.join(root, 'workspaces', '.images'))).resolves.toEqual([]);
  });

  it('stops a run that outgrows its memory (the whole run with a cgroup, the process with RLIMIT_DATA)', async () => {
    const sandbox = await backend.prepare(
      await policy({ limits: { ...limits, memoryBytes: 256 * 1024 * 1024 } }),
    );
    const result = await run(
      sandbox,
      'node -e "const a = []; for (;;) a.push(Buffer.alloc(16 * 1024 * 1024, 1))"',
    );
    expect(result.code).not.toBe(0);
    if (backend.usesCgroups) expect(result.limit).toBe('memory');
    else expect(result.stderr).toMatch(/memory|alloc/i);
    await sandbox.destroy();
  });

  it('has its helper refuse any run it did not open, and an open run twice', async () => {
    const stranger = randomUUID();
    const exec = { runId: stranger, argv: ['true'] as [string], env: {}, cwd: '/workspace', forwarders: [] };
    await expect(helper.exec(exec, [])).rejects.toThrow(/run not open/);
    await expect(helper.status(stranger)).rejects.toThrow(/run not open/);
    await expect(helper.release(stranger, false)).rejects.toThrow(/run not open/);
    const p = await policy();
    const sandbox = await backend.prepare(p);
    await expect(helper.open(p.runId, p.limits)).rejects.toThrow(/already open/);
    await expect(helper.discard(p.runId)).rejects.toThrow(/run is open/);
    await sandbox.destroy();
  });

  it('kills the whole process tree', async () => {
    const sandbox = await backend.prepare(await policy());
    const proc = sandbox.exec({
      argv: ['/bin/sh', '-c', 'sleep 100 & sleep 100 & echo started; wait'],
      env: { PATH: '/usr/bin:/bin' },
    });
    await new Promise((resolve) => proc.stdout.once('data', resolve));
    await proc.kill(500);
    const exit = await proc.exited;
    expect(exit.code === null || exit.code !== 0).toBe(true);
    await sandbox.destroy();
  });
});
