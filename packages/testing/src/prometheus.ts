import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startToolProcess } from './observability-tools';
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
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const prometheus = await startToolProcess(
    'prometheus',
    async (dir) => {
      const config = path.join(dir, 'prometheus.yml');
      await writeFile(
        config,
        JSON.stringify({
          global: { scrape_interval: '1s', evaluation_interval: '1s' },
          rule_files: options.ruleFiles,
          scrape_configs: [{ job_name: 'conveyor', static_configs: [{ targets: options.targets }] }],
        }),
      );
      return [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ];
    },
    `${url}/-/ready`,
  );
  return {
    url,
    api: async <T>(pathAndQuery: string): Promise<T> => {
      const res = await fetch(`${url}/api/v1/${pathAndQuery}`);
      const body = (await res.json()) as { status: string; data?: T; error?: string };
      if (body.status !== 'success')
        throw new Error(`prometheus ${pathAndQuery}: ${body.error ?? res.status}`);
      return body.data as T;
    },
    logs: prometheus.logs,
    stop: prometheus.stop,
  };
}
