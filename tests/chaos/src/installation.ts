import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

// tests/chaos/src → the repository root.
const ROOT = path.resolve(__dirname, '../../..');

export type ServiceName = 'orchestrator' | 'gateway' | 'ingress' | 'runner';
export const SERVICES: ServiceName[] = ['orchestrator', 'gateway', 'ingress', 'runner'];

/** One `[supervisor] <service> exited (<code or signal>)` line of start.sh's output. */
export interface SupervisorExit {
  service: string;
  how: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds; the deadline is a correctness bound (it never happens), not a performance one. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  deadlineMs: number,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${deadlineMs / 1000}s: ${what}`);
    await sleep(250);
  }
}

/**
 * `npm start` (scripts/start.sh, its supervisor and all) on a private PostgreSQL, Redis and Kafka: own ports and
 * data directory under a temporary directory, so restarting them disturbs no other suite.
 */
export class Installation {
  private output = '';

  private constructor(
    private readonly start: ChildProcess,
    readonly dataDir: string,
    readonly env: NodeJS.ProcessEnv,
    readonly ports: Record<'gateway' | 'ingress' | 'orchestratorHttp' | 'runnerHttp' | 'pg', number>,
  ) {
    start.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    start.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  static async start(extraEnv: NodeJS.ProcessEnv): Promise<Installation> {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-chaos-'));
    // As root, PostgreSQL runs as the `postgres` user, which must reach its data directory under this one.
    await chmod(dataDir, 0o755);
    const [pg, redis, kafka, kafkaController, gateway, ingress, orchHttp, orchGrpc, workerGrpc, runnerHttp] =
      (await Promise.all(Array.from({ length: 10 }, freePort))) as [
        number,
        number,
        number,
        number,
        number,
        number,
        number,
        number,
        number,
        number,
      ];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...extraEnv,
      CONVEYOR_DATA_DIR: dataDir,
      PGPORT: String(pg),
      REDIS_PORT: String(redis),
      KAFKA_PORT: String(kafka),
      KAFKA_CONTROLLER_PORT: String(kafkaController),
      PORT: String(gateway),
      INGRESS_PORT: String(ingress),
      ORCHESTRATOR_HTTP_PORT: String(orchHttp),
      ORCHESTRATOR_GRPC_PORT: String(orchGrpc),
      WORKER_GRPC_PORT: String(workerGrpc),
      RUNNER_HTTP_PORT: String(runnerHttp),
    };
    // Its own process group: the suite can stop it like a Ctrl-C would, and nothing else.
    const child = spawn('bash', [path.join(ROOT, 'scripts/start.sh')], { env, detached: true });
    const installation = new Installation(child, dataDir, env, {
      gateway,
      ingress,
      orchestratorHttp: orchHttp,
      runnerHttp,
      pg,
    });
    await eventually(
      'npm start to print "Conveyor is running"',
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited:\n${installation.output}`);
        return installation.output.includes('Conveyor is running');
      },
      600_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${installation.output.slice(-5000)}`);
    });
    return installation;
  }

  get databaseUrl(): string {
    return `postgresql://conveyor:conveyor@127.0.0.1:${this.ports.pg}/conveyor`;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.ports.gateway}/v1`;
  }

  get ingressUrl(): string {
    return `http://127.0.0.1:${this.ports.ingress}`;
  }

  /** The dev API key start.sh printed. */
  get apiKey(): string {
    const match = /Dev API key\s+(cvy_\S+)/.exec(this.output);
    if (!match) throw new Error('no dev API key in the output of npm start');
    return match[1]!;
  }

  logs(): string {
    return this.output;
  }

  /** Every service exit the supervisor reported so far. */
  supervisorExits(): SupervisorExit[] {
    return [...this.output.matchAll(/\[supervisor\]\S*\s+(\w+) exited \(([^)]+)\)/g)].map((m) => ({
      service: m[1]!,
      how: m[2]!,
    }));
  }

  async readyz(): Promise<Record<ServiceName, boolean>> {
    const url: Record<ServiceName, string> = {
      orchestrator: `http://127.0.0.1:${this.ports.orchestratorHttp}/readyz`,
      gateway: `http://127.0.0.1:${this.ports.gateway}/readyz`,
      ingress: `http://127.0.0.1:${this.ports.ingress}/readyz`,
      runner: `http://127.0.0.1:${this.ports.runnerHttp}/readyz`,
    };
    const entries = await Promise.all(
      SERVICES.map(async (s) => {
        try {
          return [s, (await fetch(url[s], { signal: AbortSignal.timeout(2000) })).ok] as const;
        } catch {
          return [s, false] as const;
        }
      }),
    );
    return Object.fromEntries(entries) as Record<ServiceName, boolean>;
  }

  async kill(service: ServiceName, signal: NodeJS.Signals): Promise<void> {
    const pid = Number((await readFile(path.join(this.dataDir, 'run', `${service}.pid`), 'utf8')).trim());
    process.kill(pid, signal);
  }

  /** scripts/infra.sh against this installation's servers: `up`, `stop postgres`, … */
  infra(...args: string[]): void {
    const result = spawnSync('bash', [path.join(ROOT, 'scripts/infra.sh'), ...args], {
      env: this.env,
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`infra.sh ${args.join(' ')} failed:\n${result.stderr}`);
  }

  /** Like Ctrl-C: start.sh stops the services, then the servers it started. Resolves with its exit code. */
  async stop(): Promise<number | null> {
    if (this.start.exitCode === null) {
      const exited = new Promise((resolve) => this.start.once('exit', resolve));
      process.kill(this.start.pid!, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 120_000)))]);
      clearTimeout(timer);
    }
    return this.start.exitCode;
  }

  /** Whether any of its servers (PostgreSQL, Redis, Kafka) or services still has a process. */
  async anythingRunning(): Promise<string[]> {
    const pidFiles = [
      'postgres/data/postmaster.pid',
      'redis/redis.pid',
      'kafka/kafka.pid',
      ...SERVICES.map((s) => `run/${s}.pid`),
    ];
    const running: string[] = [];
    for (const file of pidFiles) {
      const pid = Number(
        (await readFile(path.join(this.dataDir, file), 'utf8').catch(() => '')).split('\n')[0],
      );
      if (!pid) continue;
      try {
        process.kill(pid, 0);
        running.push(file);
      } catch {
        // gone
      }
    }
    return running;
  }

  async remove(): Promise<void> {
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
