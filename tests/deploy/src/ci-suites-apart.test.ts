import { execFileSync } from 'node:child_process';
import path from 'node:path';

// .ci/run runs `npm test` and `npm run test:kubernetes` side by side: each must find its own PostgreSQL, Redis and
// Kafka and keep its own data directory, or one suite's servers (and their data) would be the other's.
const ROOT = path.resolve(__dirname, '../../..');
const CLEAN_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };

/** The variables scripts/infra.sh exports after the given preamble ran in the same shell. */
function infraEnv(preamble: string): Record<string, string> {
  const script = `${preamble}\nbash scripts/infra.sh env; echo "export CONVEYOR_DATA_DIR=\${CONVEYOR_DATA_DIR:-$PWD/.conveyor}"`;
  const out = execFileSync('bash', ['-c', script], { cwd: ROOT, env: CLEAN_ENV, encoding: 'utf8' });
  return Object.fromEntries(
    out
      .split('\n')
      .filter((line) => line.startsWith('export '))
      .map((line) => line.slice('export '.length).split(/=(.*)/s, 2) as [string, string]),
  );
}

describe('the two CI suites run apart', () => {
  const npmTest = infraEnv('');
  const kubernetes = infraEnv(
    `ROOT=${JSON.stringify(ROOT)}; source scripts/kubernetes/lib.sh; k8s_host_infra_env`,
  );

  it.each(['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'CONVEYOR_DATA_DIR'])('%s differs', (name) => {
    expect(npmTest[name]).toBeTruthy();
    expect(kubernetes[name]).toBeTruthy();
    expect(kubernetes[name]).not.toBe(npmTest[name]);
  });

  it('uses no port of the other', () => {
    const ports = (env: Record<string, string>) =>
      ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS'].map((name) =>
        Number(/:(\d+)(\/|$)/.exec(env[name] ?? '')?.[1]),
      );
    const theirs = new Set(ports(npmTest));
    expect(ports(kubernetes).filter((port) => theirs.has(port))).toEqual([]);
  });
});
