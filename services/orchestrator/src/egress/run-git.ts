import { execFile } from 'node:child_process';

const GIT_TIMEOUT_MS = 60_000;
/**
 * git sees none of the orchestrator's environment (database URL, installation keys): only where programs are, and
 * settings that never prompt for credentials and read neither the system's nor the user's git config.
 */
const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: 'true',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

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
