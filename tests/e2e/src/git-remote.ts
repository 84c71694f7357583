import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

export const git = (args: string[], cwd?: string): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

/** A bare repository `<root>/<name>.git` whose main branch has one commit (hello.txt = "hello world"). */
export function seedRemote(root: string, name = 'origin'): string {
  const remote = path.join(root, `${name}.git`);
  const seed = path.join(root, `${name}-seed`);
  mkdirSync(path.dirname(remote), { recursive: true });
  git(['init', '--quiet', '--bare', '--initial-branch=main', remote]);
  git(['init', '--quiet', '--initial-branch=main', seed]);
  execFileSync('sh', ['-c', 'printf "hello world\\n" > hello.txt'], { cwd: seed });
  git(['add', '.'], seed);
  git(
    ['-c', 'user.name=Seed', '-c', 'user.email=seed@example.com', 'commit', '--quiet', '-m', 'initial'],
    seed,
  );
  git(['push', '--quiet', remote, 'main'], seed);
  return remote;
}

/** Whether `branch` exists in the bare repository `remote`. */
export const hasBranch = (remote: string, branch: string): boolean =>
  git(['--git-dir', remote, 'branch', '--list', branch]) !== '';

/** The environment's setup commands stand in for the agent: one commit and one uncommitted file in `origin/`. */
export const AGENT_SETUP = `cd origin && printf 'hello conveyor\\n' > hello.txt && git -c user.name=Agent -c user.email=agent@example.com commit --quiet -am 'agent: rename world' && printf 'left uncommitted\\n' > notes.txt`;

/** Commit subjects of `branch` in `remote`, newest first. */
export const branchLog = (remote: string, branch: string): string[] =>
  git(['--git-dir', remote, 'log', '--format=%s', branch]).split('\n');

/** What a run's branch holds after AGENT_SETUP: the platform's commit of the uncommitted file on the agent's commit. */
export const agentWorkLog = (runId: string): string[] => [
  `conveyor: run ${runId}`,
  'agent: rename world',
  'initial',
];
