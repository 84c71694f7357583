import { execFile } from 'node:child_process';

const GIT_TIMEOUT_MS = 60_000;
// Never prompt for credentials on a server, and never let a repository's config run programs.
const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', GIT_CONFIG_NOSYSTEM: '1' };

/** Runs git on the orchestrator; a failure carries git's last line of stderr (never its environment). */
export function git(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd: options.cwd,
        env: { ...GIT_ENV, ...options.env },
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: 32 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const subcommand = args.find((a, i) => a !== '-c' && args[i - 1] !== '-c');
        if (err)
          reject(
            new Error(`git ${subcommand} failed: ${(stderr || err.message).trim().split('\n').pop() ?? ''}`),
          );
        else resolve(stdout);
      },
    );
  });
}
