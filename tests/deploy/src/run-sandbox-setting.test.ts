import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { createTestTrust } from '@conveyor/testing';

// No shipped configuration runs agents bare: Compose's runner uses bubblewrap with the container options its
// privileged helper needs, k8s/ uses the Pod backend, and `none` needs a second, explicit setting.
const ROOT = path.resolve(__dirname, '../../..');
const RUNNER_MAIN = path.join(ROOT, 'services/runner/dist/main.js');

type Service = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- compose files are free-form

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });

describe('the run sandbox of every shipped configuration', () => {
  it("gives Compose's runner bubblewrap as root with the container options its helper needs", () => {
    const runner = (
      parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
        services: Record<string, Service>;
      }
    ).services.runner!;
    expect(runner.environment.RUN_SANDBOX).toBe('bubblewrap');
    expect(runner.environment.RUN_SANDBOX_NONE_ACKNOWLEDGED).toBeUndefined();
    // Root at start (it forks the privileged helper, then drops to conveyor-runner); namespaces, loop devices and a
    // writable cgroup tree: what privileged grants and Docker's defaults withhold.
    expect(runner.user).toBe('root');
    expect(runner.privileged).toBe(true);
    expect(runner.build).toEqual({
      context: '.',
      dockerfile: 'deploy/Dockerfile',
      args: { SERVICE: 'runner' },
    });
    expect(runner.volumes).toContain('/workspaces');
  });

  it('sets RUN_SANDBOX=none nowhere in docker-compose.yml, k8s/ or deploy/ (documentation aside)', () => {
    const shipped = [
      path.join(ROOT, 'docker-compose.yml'),
      ...filesUnder(path.join(ROOT, 'k8s')),
      ...filesUnder(path.join(ROOT, 'deploy')),
    ].filter((file) => !file.endsWith('.md'));
    const offending = shipped.filter((file) =>
      /RUN_SANDBOX\W+(?:value:\s*)?['"]?none\b/.test(readFileSync(file, 'utf8')),
    );
    expect(offending).toEqual([]);
    expect(readFileSync(path.join(ROOT, 'k8s/base/runner.yaml'), 'utf8')).toMatch(
      /- name: RUN_SANDBOX\n\s+value: kubernetes\n/,
    );
  });

  it('the built runner refuses to start with RUN_SANDBOX=none unless acknowledged', async () => {
    const trust = await createTestTrust();
    try {
      const { RUN_SANDBOX_NONE_ACKNOWLEDGED: _ignored, ...env } = process.env;
      const started = spawnSync(process.execPath, [RUNNER_MAIN], {
        env: { ...env, ...trust.serviceEnv('runner'), RUN_SANDBOX: 'none', HTTP_PORT: '0' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(started.status).not.toBe(0);
      expect(started.status).not.toBeNull();
      expect(`${started.stdout}${started.stderr}`).toContain(
        'RUN_SANDBOX_NONE_ACKNOWLEDGED=runs-are-not-isolated',
      );
    } finally {
      await trust.remove();
    }
  });
});
