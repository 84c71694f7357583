import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort, type RunningPlatform } from './start-platform';

const ROOT = path.resolve(__dirname, '../../..');

export interface ExtraService {
  url: string;
  logs: () => string;
  stop: () => Promise<void>;
}

/**
 * One more gateway or ingress process of a running platform, with different settings (an unreachable Kafka, a
 * chattier LOG_LEVEL to inspect its access log); it talks to the platform's orchestrator.
 */
export async function startExtraService(
  platform: RunningPlatform,
  service: 'gateway' | 'ingress',
  env: NodeJS.ProcessEnv = {},
): Promise<ExtraService> {
  const port = await freePort();
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, `services/${service}/dist/main.js`)], {
    env: {
      ...platform.env,
      ...platform.trust.serviceEnv(service),
      PORT: String(port),
      ORCHESTRATOR_ADDR: platform.orchestratorGrpcAddr,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
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
    logs: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
