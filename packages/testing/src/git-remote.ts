import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** Runs git on the host without the machine's system configuration; its trimmed output. */
export const git = (args: string[], cwd?: string): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

/**
 * A bare repository `<root>/<name>.git` whose main branch has one commit (hello.txt = "hello world"), pushed from the
 * work tree `<root>/<name>-seed` (commit there and push to `main` to move it).
 */
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
