import { readdir, stat } from 'node:fs/promises';

/** Processes whose owner is `uid` (a run's own uid: all its processes, wherever they are), from the host's /proc. */
export async function countOwnedBy(uid: number): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = await stat(`/proc/${entry}`).catch(() => undefined);
    if (info?.uid === uid) count++;
  }
  return count;
}
