import { readdir, readFile, stat } from 'node:fs/promises';

/** Reads of the host's /proc the local backend needs to signal and count a run's processes from outside. */

async function pids(): Promise<number[]> {
  return (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).map(Number);
}

/** Every descendant of `root` (not `root` itself), found through the parent pids in /proc/<pid>/stat. */
export async function descendants(root: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const pid of await pids()) {
    const line = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
    const ppid = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid)!.push(pid);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Processes whose owner is `uid` (a run's own uid: all its processes, wherever they are). */
export async function countOwnedBy(uid: number): Promise<number> {
  let count = 0;
  for (const pid of await pids()) {
    const info = await stat(`/proc/${pid}`).catch(() => undefined);
    if (info?.uid === uid) count++;
  }
  return count;
}

export function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}
