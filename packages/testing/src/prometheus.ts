import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { observabilityTool } from './observability-tools';
import { freePort } from './start-platform';

export interface RunningPrometheus {
  url: string;
  /** GET /api/v1/<path>: the `data` of a success, or a thrown error with Prometheus's own message. */
  api<T = unknown>(pathAndQuery: string): Promise<T>;
  logs(): string;
  stop(): Promise<void>;
}

/**
 * A real Prometheus (built from the Go module proxy) on a loopback port of its own, scraping `targets` (host:port,
 * `/metrics`) every second as the job `conveyor`, with `ruleFiles` loaded; its data in a temporary directory.
 */
export async function startPrometheus(options: {
  targets: string[];
  ruleFiles: string[];
}): Promise<RunningPrometheus> {
  const binary = observabilityTool('prometheus');
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  await writeFile(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: options.ruleFiles,
      scrape_configs: [{ job_name: 'conveyor', static_configs: [{ targets: options.targets }] }],
    }),
  );
  const child = spawn(
    binary,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready at ${url}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    api: async <T>(pathAndQuery: string): Promise<T> => {
      const res = await fetch(`${url}/api/v1/${pathAndQuery}`);
      const body = (await res.json()) as { status: string; data?: T; error?: string };
      if (body.status !== 'success')
        throw new Error(`prometheus ${pathAndQuery}: ${body.error ?? res.status}`);
      return body.data as T;
    },
    logs: () => output,
    stop,
  };
}
