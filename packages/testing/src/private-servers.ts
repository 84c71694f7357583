import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './start-platform';

const run = promisify(execFile);

/**
 * A server of a test's own, which the test may stop and start (or lose the data of) without touching the shared
 * servers other tests use at the same time. Same Debian binaries as `scripts/infra.sh` (docs/faults.md).
 */
export interface PrivateServer {
  /** Connection URL (PostgreSQL: as the superuser `conveyor`, to the `postgres` database). */
  url: string;
  /** Stops the server (PostgreSQL: `pg_ctl stop -m fast`; Redis: SIGKILL, so whatever it held is lost). */
  stop(): Promise<void>;
  /** Starts it again on the same port (Redis: empty). */
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  remove(): Promise<void>;
}

/** initdb and pg_ctl of the newest PostgreSQL installed from Debian packages. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0])
    throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql: run scripts/infra.sh up');
  return path.join(root, versions[0], 'bin');
}

/** PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` OS user. */
const asOwner = (argv: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', ...argv]] : [argv[0]!, argv.slice(1)];

/** A PostgreSQL cluster in a temporary directory on a free port; `conveyor`/`conveyor` is its superuser. */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const bin = postgresBin();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const pwfile = path.join(dir, 'pwfile');
  await writeFile(pwfile, 'conveyor\n', { mode: 0o600 });
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    await chown(pwfile, Number(stdout.trim()), Number(gid.trim()));
    await chmod(dir, 0o700);
  }
  const pg = (argv: string[]) => {
    const [file, args] = asOwner(argv);
    return run(file, args, { cwd: '/' });
  };
  await pg([
    path.join(bin, 'initdb'),
    '-D',
    data,
    '-U',
    'conveyor',
    `--pwfile=${pwfile}`,
    '--encoding=UTF8',
    '--locale=C.UTF-8',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
  ]);
  const start = async () => {
    await pg([
      path.join(bin, 'pg_ctl'),
      '-D',
      data,
      '-l',
      path.join(dir, 'postgres.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories='' -c fsync=off`,
      'start',
    ]);
  };
  const stop = async () => {
    await pg([path.join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await start();
  return {
    url: `postgresql://conveyor:conveyor@127.0.0.1:${port}/postgres`,
    start,
    stop,
    remove: async () => {
      await stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis server without persistence on a free port: stopping it loses everything it held. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    const server = spawn('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
    child = server;
    server.stdout.on('data', (d: Buffer) => (output += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const ready = () => {
        if (output.includes('Ready to accept connections')) resolve();
      };
      server.stdout.on('data', ready);
      server.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
    });
  };
  const stop = async () => {
    const server = child;
    child = undefined;
    if (!server || server.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      server.once('exit', () => resolve());
      server.kill('SIGKILL');
    });
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop, remove: stop };
}
