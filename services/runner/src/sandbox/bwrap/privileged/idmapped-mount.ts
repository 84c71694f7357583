import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * Attaches an idmapped copy of the mount at `source` to `target`, showing files of uid/gid `from` as `to`
 * (idmapped_mount.py: the new mount API through ctypes; tested by test_idmapped_mount.py).
 */
const PROGRAM = path.join(__dirname, 'idmapped_mount.py');

export async function idmappedMount(source: string, target: string, from: number, to: number): Promise<void> {
  try {
    await exec('/usr/bin/python3', ['-I', PROGRAM, source, target, String(from), String(to)], {
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new Error(`idmapped mount of ${source}: ${(stderr || message).trim()}`);
  }
}
