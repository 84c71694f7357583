import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// `npm start` without root (issue 35): the run sandbox needs the runner to start as root, so start.sh refuses at
// once, says what needs root and offers the two ways forward, instead of a runner crash-looping under the supervisor.
const ROOT = path.resolve(__dirname, '../../..');
// As an unprivileged user: `nobody` when the tests run as root, the current user otherwise.
const unprivileged =
  process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];

function asUnprivileged(args: string[], env: NodeJS.ProcessEnv = {}) {
  const [command, ...rest] = [...unprivileged, ...args];
  return spawnSync(command!, rest, {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: os.tmpdir(), ...env },
    timeout: 60_000,
  });
}

describe('npm start without root', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-noroot-'));
    rmSync(dataDir, { recursive: true });
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses before starting anything, naming what needs root and the exact commands', () => {
    const started = asUnprivileged(['bash', 'scripts/start.sh'], { CONVEYOR_DATA_DIR: dataDir });
    expect(started.status).toBe(1);
    expect(started.stderr).toContain('npm start needs root for the run sandbox');
    expect(started.stderr).toContain('sudo --preserve-env env "PATH=$PATH" npm start');
    expect(started.stderr).toContain(
      'RUN_SANDBOX=none RUN_SANDBOX_NONE_ACKNOWLEDGED=runs-are-not-isolated npm start',
    );
    // Nothing was provisioned: no data directory, no infrastructure, no services.
    expect(existsSync(dataDir)).toBe(false);
  });

  it('lets an explicitly unsandboxed start through the check (the runner still wants the acknowledgement)', () => {
    const check = asUnprivileged(
      [
        'bash',
        '-c',
        'ROOT=. && source scripts/lib/bootstrap.sh && require_sandbox_privileges && echo passed',
      ],
      { RUN_SANDBOX: 'none' },
    );
    expect(check.stdout.trim()).toBe('passed');
  });
});
