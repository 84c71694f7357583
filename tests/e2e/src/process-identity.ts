import { readdirSync, readFileSync } from 'node:fs';

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
