import { readdir, stat } from 'node:fs/promises';

/** Processes whose owner is `uid` (a run's own uid: all its processes, wherever they are), from the host's /proc. */
export async function pidsOwnedBy(uid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (/^\d+$/.test(entry) && (await stat(`/proc/${entry}`).catch(() => undefined))?.uid === uid)
      pids.push(Number(entry));
  }
  return pids;
}
