import { readdirSync, readFileSync } from 'node:fs';

/** Parent PID from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may hold spaces and parentheses). */
function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined; // gone meanwhile
  }
}

/**
 * Every living descendant of `root` (Linux /proc). Process groups miss descendants that started their own session or
 * group, as agent CLIs do for the shells they run (Gemini CLI detaches them); a parent walk finds those too.
 */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(entry);
    if (parent === undefined) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
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

/** Signals every process in `pids`, ignoring those already gone. */
export function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
