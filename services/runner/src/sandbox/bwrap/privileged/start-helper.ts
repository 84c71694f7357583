import { spawnSync } from 'node:child_process';
import { SandboxUnavailable } from '../../run-sandbox';
import { PrivilegedHelper } from './helper-client';
import type { HelperSettings } from './helper-protocol';

const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const REQUIRED_COMMANDS = ['bwrap', 'socat', 'setpriv', 'prlimit', 'mkfs.ext4', 'mount', 'umount'];

function which(command: string): string | undefined {
  const found = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', command], {
    encoding: 'utf8',
    env: { PATH: HOST_PATH },
  });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

function accountId(flag: '-u' | '-g', user: string): number {
  const id = spawnSync('id', [flag, user], { encoding: 'utf8', env: { PATH: HOST_PATH } });
  if (id.status !== 0)
    throw new SandboxUnavailable(
      `no account ${user} for the runner to run as (scripts/infra.sh up creates it; SANDBOX_RUNNER_USER names it)`,
    );
  return Number(id.stdout.trim());
}

/**
 * Forks the privileged helper, then drops this process to the unprivileged runner account for good (no groups, no
 * capabilities): from here on only the helper is root. The caller has read what only root may read (TLS keys) before.
 */
export async function startHelperAndDropRoot(
  settings: Omit<HelperSettings, 'bwrapPath' | 'runnerUid' | 'runnerGid'>,
  runnerUser: string,
  onLost: (reason: string) => void,
): Promise<PrivilegedHelper> {
  if (process.getuid?.() !== 0)
    throw new SandboxUnavailable(
      'the local sandbox gives every run its own uid and filesystem and needs the runner to start as root (it keeps a small privileged helper and drops the rest), or set RUN_SANDBOX=none with RUN_SANDBOX_NONE_ACKNOWLEDGED=runs-are-not-isolated for development',
    );
  const missing = REQUIRED_COMMANDS.filter((c) => !which(c));
  if (missing.length > 0)
    throw new SandboxUnavailable(
      `missing ${missing.join(', ')}: run scripts/infra.sh up (it installs bubblewrap, socat, util-linux, e2fsprogs)`,
    );
  const runnerUid = accountId('-u', runnerUser);
  const runnerGid = accountId('-g', runnerUser);
  let helper: PrivilegedHelper;
  try {
    helper = await PrivilegedHelper.start(
      { ...settings, bwrapPath: which('bwrap')!, runnerUid, runnerGid },
      onLost,
    );
  } catch (err) {
    throw new SandboxUnavailable(`the privileged sandbox helper could not start: ${(err as Error).message}`);
  }
  process.setgroups!([]);
  process.setgid!(runnerGid);
  process.setuid!(runnerUid);
  return helper;
}
