import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KAFKA_BROKERS, REDIS_URL } from './infra-env';
import { createTestDatabase } from './test-database';
import { createTestTrust, type TestTrust } from './test-trust';
import { uniqueName } from './unique-name';

// packages/testing/{src,dist} → the repo root, where the built services live.
const ROOT = path.resolve(__dirname, '../../..');

export interface RunningPlatform {
  apiUrl: string;
  ingressUrl: string;
  /** The orchestrator's HTTP port: /healthz, /readyz, /metrics. */
  orchestratorHttpUrl: string;
  /** The runner's HTTP port: /healthz, /readyz, /metrics. */
  runnerHttpUrl: string;
  /** The orchestrator's core gRPC address (host:port): mutual TLS, certificates of `trust` only. */
  orchestratorGrpcAddr: string;
  /** The worker endpoint (host:port), where self-hosted workers connect with a worker token over TLS. */
  workerEndpointAddr: string;
  /** This platform's own CA, service certificates and keys (a fresh installation each time). */
  trust: TestTrust;
  databaseUrl: string;
  env: NodeJS.ProcessEnv;
  /** An admin key of a freshly seeded team. */
  apiKey: string;
  logs: () => string;
  /** Sends a signal to one of the service processes (e.g. SIGKILL the runner to test recovery). */
  kill(service: 'orchestrator' | 'gateway' | 'ingress' | 'runner', signal?: NodeJS.Signals): void;
  /** One of the service processes (its pid, its exit). */
  process(service: 'orchestrator' | 'gateway' | 'ingress' | 'runner'): ChildProcess | undefined;
  /**
   * Starts the runner again, as a supervisor would after it exited (same settings, data directories and identity
   * settings), once its previous process has exited; resolves when the new one is ready.
   */
  restartRunner(): Promise<void>;
  /** Starts the orchestrator again (same settings and ports) once its previous process has exited. */
  restartOrchestrator(): Promise<void>;
  stop(): Promise<void>;
}

/** A port nothing listens on at the moment of asking (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, name: string, logs: () => string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited with ${child.exitCode ?? child.signalCode}:\n${logs()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} not ready at ${url}:\n${logs()}`);
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'services/orchestrator/dist/cli/main.js'), ...args],
      { env },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`conveyor ${args.join(' ')} failed: ${err}`)),
    );
  });
}

/**
 * Starts the built services as separate processes, as in production, against a fresh database and a
 * per-test Kafka topic and consumer group, then seeds a team with an admin key.
 */
export async function startPlatform(
  options: {
    env?: NodeJS.ProcessEnv;
    withRunner?: boolean;
    /** Servers of the test's own (private-servers.ts), for tests that stop them; the shared ones otherwise. */
    databaseAdminUrl?: string;
    redisUrl?: string;
    /**
     * An installation's own database and trust material (a restored backup, docs/operations.md), used as they are
     * and left in place at `stop()`; a fresh database and CA otherwise.
     */
    installation?: { databaseUrl: string; trust: TestTrust };
  } = {},
): Promise<RunningPlatform> {
  const db = options.installation
    ? { url: options.installation.databaseUrl, drop: async () => undefined }
    : await createTestDatabase({ adminUrl: options.databaseAdminUrl });
  const trust = options.installation?.trust ?? (await createTestTrust());
  const [grpcPort, workerGrpcPort, orchHttp, gatewayPort, ingressPort, runnerHttp] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const suffix = uniqueName('e2e');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    REDIS_URL: options.redisUrl ?? REDIS_URL,
    KAFKA_BROKERS: KAFKA_BROKERS.join(','),
    DELIVERIES_TOPIC: `deliveries-${suffix}`,
    DELIVERIES_CONSUMER_GROUP: `orchestrator-${suffix}`,
    RUN_QUEUE: `runs-${suffix}`,
    SCHEDULE_QUEUE: `schedule-ticks-${suffix}`,
    WORKSPACE_ROOT: path.join(os.tmpdir(), `conveyor-e2e-${suffix}`),
    RUN_SANDBOX: 'none',
    RUN_SANDBOX_NONE_ACKNOWLEDGED: 'runs-are-not-isolated',
    // Every test platform seeds the same team ID; its API budget must not be shared with other platforms.
    RATE_LIMIT_REDIS_PREFIX: `conveyor:rl:${suffix}`,
    // Likewise its auth epochs: another platform's changes (or start) would empty this one's key cache.
    AUTH_EPOCH_REDIS_PREFIX: `conveyor:auth-epoch:${suffix}`,
    RUNNER_LOST_AFTER_MS: '5000',
    // The gateway checks every JSON response against the OpenAPI document's schema; a mismatch becomes a 500.
    // Benchmarks turn it off to measure the production configuration.
    VALIDATE_RESPONSES: 'true',
    ...options.env,
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  let output = '';
  const children: ChildProcess[] = [];
  const byName = new Map<string, ChildProcess>();
  const start = (name: string, entry: string, extra: NodeJS.ProcessEnv): ChildProcess => {
    const child = spawn(process.execPath, [path.join(ROOT, entry)], { env: { ...env, ...extra } });
    child.stdout?.on('data', (d: Buffer) => (output += `[${name}] ${d.toString()}`));
    child.stderr?.on('data', (d: Buffer) => (output += `[${name}] ${d.toString()}`));
    children.push(child);
    byName.set(name, child);
    return child;
  };
  const logs = () => output;
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await db.drop();
    if (!options.installation) await trust.remove();
  };

  const startOrchestrator = async () => {
    const orchestrator = start('orchestrator', 'services/orchestrator/dist/main.js', {
      ...trust.serviceEnv('orchestrator'),
      GRPC_PORT: String(grpcPort),
      WORKER_GRPC_PORT: String(workerGrpcPort),
      HTTP_PORT: String(orchHttp),
      // Signed download links point at this gateway.
      PUBLIC_API_BASE_URL: `http://127.0.0.1:${gatewayPort}/v1`,
      // Webhook URLs shown by the management API point at this ingress.
      WEBHOOK_BASE_URL: `http://127.0.0.1:${ingressPort}`,
    });
    await waitReady(`http://127.0.0.1:${orchHttp}/readyz`, orchestrator, 'orchestrator', logs);
  };
  /** Once `name`'s process has exited (a test killed it), it starts again. */
  const exited = async (name: string) => {
    const previous = byName.get(name);
    if (previous && previous.exitCode === null && previous.signalCode === null)
      await new Promise((resolve) => previous.once('exit', resolve));
  };

  try {
    await startOrchestrator();
    const orchestratorAddr = `127.0.0.1:${grpcPort}`;
    const gateway = start('gateway', 'services/gateway/dist/main.js', {
      ...trust.serviceEnv('gateway'),
      PORT: String(gatewayPort),
      ORCHESTRATOR_ADDR: orchestratorAddr,
    });
    const ingress = start('ingress', 'services/ingress/dist/main.js', {
      ...trust.serviceEnv('ingress'),
      PORT: String(ingressPort),
      ORCHESTRATOR_ADDR: orchestratorAddr,
    });
    await waitReady(`http://127.0.0.1:${gatewayPort}/readyz`, gateway, 'gateway', logs);
    await waitReady(`http://127.0.0.1:${ingressPort}/readyz`, ingress, 'ingress', logs);
    const startRunner = async () => {
      const runner = start('runner', 'services/runner/dist/main.js', {
        ...trust.serviceEnv('runner'),
        HTTP_PORT: String(runnerHttp),
        ORCHESTRATOR_ADDR: orchestratorAddr,
      });
      await waitReady(`http://127.0.0.1:${runnerHttp}/readyz`, runner, 'runner', logs);
    };
    if (options.withRunner !== false) await startRunner();
    const seeded = JSON.parse(await runCli(['seed-dev'], env)) as { apiKey: string };
    return {
      apiUrl: `http://127.0.0.1:${gatewayPort}/v1`,
      ingressUrl: `http://127.0.0.1:${ingressPort}`,
      orchestratorHttpUrl: `http://127.0.0.1:${orchHttp}`,
      runnerHttpUrl: `http://127.0.0.1:${runnerHttp}`,
      orchestratorGrpcAddr: orchestratorAddr,
      workerEndpointAddr: `127.0.0.1:${workerGrpcPort}`,
      trust,
      databaseUrl: db.url,
      // For the CLI: `conveyor apply` encrypts secrets with the installation key.
      env: { ...env, ...trust.keys },
      apiKey: seeded.apiKey,
      logs,
      kill: (service, signal = 'SIGTERM') => byName.get(service)?.kill(signal),
      process: (service) => byName.get(service),
      restartRunner: async () => {
        await exited('runner');
        await startRunner();
      },
      restartOrchestrator: async () => {
        await exited('orchestrator');
        await startOrchestrator();
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export { runCli };
