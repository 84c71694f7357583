import http from 'node:http';
import net from 'node:net';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import { BwrapBackend } from './bwrap-backend';
import type { RunSandbox, SandboxPolicy } from './run-sandbox';

// The real bubblewrap backend on this machine: every assertion is about what a process inside can or cannot do.

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
  let allowed: http.Server;
  let allowedPort: number;
  const egress: Array<{ host: string; allowed: boolean }> = [];

  const policy = async (runId: string, overrides: Partial<SandboxPolicy> = {}): Promise<SandboxPolicy> => {
    const workspaceDir = path.join(root, 'workspaces', runId);
    await mkdir(workspaceDir, { recursive: true });
    return {
      runId,
      workspaceDir,
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
    backend = new BwrapBackend({
      readOnlyPaths: [],
      internalHosts: [`127.0.0.1:${allowedPort}`],
      stateDir: path.join(root, 'state'),
      monitorIntervalMs: 200,
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
    await backend.check();
  });

  afterAll(async () => {
    allowed.closeAllConnections();
    allowed.close();
    await rm(root, { recursive: true, force: true });
  });

  it('runs as an unprivileged uid with no capabilities, its own /proc and only the environment it is given', async () => {
    const sandbox = await backend.prepare(await policy('ident'));
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
    const other = await policy('other');
    await writeFile(path.join(other.workspaceDir, 'secret.txt'), 'other run');
    const sandbox = await backend.prepare(await policy('files'));
    const result = await run(
      sandbox,
      [
        'echo data > /workspace/mine.txt && echo ws-ok',
        `cat ${other.workspaceDir}/secret.txt 2>/dev/null || echo other-hidden`,
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
    expect(await readFile(path.join(root, 'workspaces', 'files', 'mine.txt'), 'utf8')).toBe('data\n');
    const usage = await sandbox.destroy();
    expect(usage.diskBytes).toBeGreaterThan(0);
  });

  it('has no route to the host network; egress goes through the filter, endpoints are forwarded', async () => {
    const endpoint = http.createServer((_req, res) => res.end('endpoint says hi'));
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const sandbox = await backend.prepare(
      await policy('net', {
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

  it('ends a fork bomb with the processes limit', async () => {
    const sandbox = await backend.prepare(await policy('fork', { limits: { ...limits, maxProcesses: 32 } }));
    const result = await run(sandbox, 'while true; do sleep 30 & done');
    expect(result.limit).toBe('processes');
    await sandbox.destroy();
  });

  it('ends the run at the wall-clock limit, and refuses to exec afterwards', async () => {
    const sandbox = await backend.prepare(await policy('slow', { limits: { ...limits, wallClockMs: 1500 } }));
    expect((await run(sandbox, 'sleep 60')).limit).toBe('timeout');
    expect((await run(sandbox, 'echo again')).limit).toBe('timeout');
    await sandbox.destroy();
  });

  it('ends the run when the workspace outgrows its disk limit', async () => {
    const sandbox = await backend.prepare(
      await policy('disk', { limits: { ...limits, diskBytes: 5 * 1024 * 1024 } }),
    );
    const result = await run(sandbox, 'head -c 20000000 /dev/zero > /workspace/big; sleep 60');
    expect(result.limit).toBe('disk');
    await sandbox.destroy();
  });

  it('stops a run that outgrows its memory (the whole run with a cgroup, the process with RLIMIT_DATA)', async () => {
    const sandbox = await backend.prepare(
      await policy('memory', { limits: { ...limits, memoryBytes: 256 * 1024 * 1024 } }),
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

  it('refuses a workspace its uid could not reach, rather than run without it', async () => {
    const hidden = path.join(root, 'private');
    await mkdir(path.join(hidden, 'ws'), { recursive: true, mode: 0o700 });
    await chmod(hidden, 0o700);
    await expect(
      backend.prepare({ ...(await policy('unused')), workspaceDir: path.join(hidden, 'ws') }),
    ).rejects.toThrow(/not traversable/);
  });

  it('kills the whole process tree', async () => {
    const sandbox = await backend.prepare(await policy('kill'));
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
