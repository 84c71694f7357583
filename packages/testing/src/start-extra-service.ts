import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort, type RunningPlatform } from './start-platform';

const ROOT = path.resolve(__dirname, '../../..');

export interface ExtraService {
  /** Its HTTP address (health, readiness; the API of a gateway or ingress). */
  url: string;
  /** Its process id (benchmarks read its CPU time from /proc). */
  pid: number;
  logs: () => string;
  stop: () => Promise<void>;
  /** Ends the process abruptly (a crash: no graceful shutdown). */
  kill: () => void;
}

type ExtraServiceName = 'gateway' | 'ingress' | 'orchestrator' | 'runner';

/** The listening ports of one more process of a service. */
async function ports(service: ExtraServiceName): Promise<{ http: number; env: NodeJS.ProcessEnv }> {
  const http = await freePort();
  if (service === 'runner') return { http, env: { HTTP_PORT: String(http) } };
  if (service !== 'orchestrator') return { http, env: { PORT: String(http) } };
  return {
    http,
    env: {
      HTTP_PORT: String(http),
      GRPC_PORT: String(await freePort()),
      WORKER_GRPC_PORT: String(await freePort()),
    },
  };
}

/**
 * One more gateway, ingress, orchestrator or runner process of a running platform, with different settings (an
 * unreachable Kafka, a chattier LOG_LEVEL to inspect its access log) or as a second replica (an orchestrator sharing
 * the database and the deliveries consumer group). A gateway, ingress or runner talks to the platform's orchestrator.
 */
export async function startExtraService(
  platform: RunningPlatform,
  service: ExtraServiceName,
  env: NodeJS.ProcessEnv = {},
): Promise<ExtraService> {
  const { http, env: portEnv } = await ports(service);
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, `services/${service}/dist/main.js`)], {
    env: {
      ...platform.env,
      ...platform.trust.serviceEnv(service),
      ...portEnv,
      ORCHESTRATOR_ADDR: platform.orchestratorGrpcAddr,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${http}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`extra ${service} exited: ${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not yet listening
    }
    if (Date.now() > deadline) throw new Error(`extra ${service} did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  return {
    url,
    pid: child.pid!,
    logs: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
    kill: () => child.kill('SIGKILL'),
  };
}
