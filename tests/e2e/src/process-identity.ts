import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** Effective uid and capabilities of a process, from /proc/<pid>/status. */
export function identity(pid: number): { uid: number; capEff: bigint } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    uid: Number(/^Uid:\s+\d+\s+(\d+)/m.exec(status)![1]),
    capEff: BigInt(`0x${/^CapEff:\s+([0-9a-f]+)/m.exec(status)![1]}`),
  };
}

/** A process's direct children (the 4th field of /proc/<pid>/stat is the parent's pid). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/** The privileged helper a bubblewrap worker forked: its child that is still root. */
export const helperOf = (pid: number) => childrenOf(pid).find((child) => identity(child).uid === 0);

/** Every descendant of `pid`. */
export function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** PIDs of every process on this machine whose arguments contain `needle`. */
export async function processesMatching(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle)) found.push(Number(pid));
  }
  return found;
}
