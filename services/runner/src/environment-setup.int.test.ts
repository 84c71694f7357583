import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import { environmentSchema, setUpEnvironment } from './environment-setup';
import type { RunSandbox, SandboxExecOptions } from './sandbox/run-sandbox';
import { UnsandboxedBackend } from './sandbox/unsandboxed-backend';

const git = (args: string[], cwd?: string) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

// A repository the platform clones (`clone: "platform"`): the runner gets the orchestrator's bundle and clones it in
// the sandbox from stdin, with no network, on the branch the orchestrator chose; origin is the URL, no credential.
describe('setUpEnvironment with a repository the platform clones', () => {
  let root: string;
  let sandbox: RunSandbox;
  const execs: SandboxExecOptions[] = [];

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'platform-clone-'));
    const backend = new UnsandboxedBackend(createLogger({ service: 'test', level: 'silent' }), root, true);
    const prepared = await backend.prepare({
      runId: 'run-1',
      allowedHosts: [],
      endpoints: [],
      limits: { wallClockMs: 60_000, maxProcesses: 64, memoryBytes: 2 ** 30, diskBytes: 2 ** 30 },
    });
    sandbox = { ...prepared, exec: (options) => (execs.push(options), prepared.exec(options)) };
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('clones the bundle offline on its branch, with the upstream the push measures from', async () => {
    const seed = path.join(root, 'seed');
    git(['init', '--quiet', '--initial-branch=main', seed]);
    execFileSync('sh', ['-c', 'echo one > a.txt'], { cwd: seed });
    git(['add', '.'], seed);
    git(['-c', 'user.name=S', '-c', 'user.email=s@example.com', 'commit', '--quiet', '-m', 'one'], seed);
    git(['checkout', '--quiet', '-b', 'conveyor/run-1'], seed);
    execFileSync('sh', ['-c', 'echo two > a.txt'], { cwd: seed });
    git(['-c', 'user.name=S', '-c', 'user.email=s@example.com', 'commit', '--quiet', '-am', 'two'], seed);
    git(['bundle', 'create', '--quiet', path.join(root, 'b.bundle'), 'refs/heads/conveyor/run-1'], seed);
    const bundle = await readFile(path.join(root, 'b.bundle'));
    const url = 'https://github.com/acme/private.git';
    const asked: number[] = [];

    await setUpEnvironment(
      environmentSchema.parse({
        repositories: [{ url, directory: 'origin', clone: 'platform', push_secret_name: 'github-app:gha_1' }],
      }),
      sandbox,
      { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      new AbortController().signal,
      () => undefined,
      async (index) => (asked.push(index), { bundle, branch: 'conveyor/run-1' }),
    );

    expect(asked).toEqual([0]);
    const clone = path.join(sandbox.workspaceDir, 'origin');
    expect(git(['rev-parse', '--abbrev-ref', 'HEAD'], clone)).toBe('conveyor/run-1');
    expect(git(['log', '--format=%s'], clone).split('\n')).toEqual(['two', 'one']);
    expect(git(['rev-parse', '@{upstream}'], clone)).toBe(git(['rev-parse', 'HEAD'], clone));
    expect(git(['remote', 'get-url', 'origin'], clone)).toBe(url);
    // The clone reached nothing: no network, the bundle on stdin.
    expect(execs.at(-1)).toMatchObject({ network: false, stdin: 'pipe' });
  });
});
