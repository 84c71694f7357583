import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Copies a mounted run filesystem's image consistently: freezes it (every write flushed, none accepted), copies the
 * image keeping its holes, thaws it. No process of the run runs at that point (setup has ended).
 */
export async function copyFrozen(mountPoint: string, image: string, target: string): Promise<void> {
  await exec('fsfreeze', ['--freeze', mountPoint], { env: { PATH: HOST_PATH } });
  try {
    await exec('cp', ['--sparse=always', '--', image, target], { env: { PATH: HOST_PATH } });
  } finally {
    await exec('fsfreeze', ['--unfreeze', mountPoint], { env: { PATH: HOST_PATH } });
  }
}
