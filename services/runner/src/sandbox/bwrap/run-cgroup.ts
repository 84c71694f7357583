import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Where this process's runs' groups go: v1 memory and pids parents, or the v2 `conveyor-sandbox` group. */
type Parents = { v1: { memory: string; pids: string } } | { v2: string };

async function parents(): Promise<Parents | undefined> {
  const own = await readFile('/proc/self/cgroup', 'utf8').catch(() => '');
  const v1 = (controller: string) =>
    new RegExp(`^\\d+:(?:[^:]*,)?${controller}(?:,[^:]*)?:(.*)$`, 'm').exec(own)?.[1];
  const memoryV1 = v1('memory');
  const pidsV1 = v1('pids');
  if (memoryV1 !== undefined && pidsV1 !== undefined)
    return {
      v1: {
        memory: path.join(CGROUP_ROOT, 'memory', memoryV1),
        pids: path.join(CGROUP_ROOT, 'pids', pidsV1),
      },
    };
  const v2 = /^0::(.*)$/m.exec(own)?.[1];
  if (v2 === undefined) return undefined;
  const ownDir = path.join(CGROUP_ROOT, v2);
  return { v2: path.join(v2 === '/' ? ownDir : path.dirname(ownDir), 'conveyor-sandbox') };
}

const counter = async (file: string, key: string): Promise<number> => {
  const text = await readFile(file, 'utf8').catch(() => '');
  return Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
};

/**
 * Memory and task limits of one run's processes together, with the kernel's own count of when they were hit: a
 * cgroup under the runner's own (cgroup v1: one group in the memory and one in the pids hierarchy; v2: a group under
 * a `conveyor-sandbox` group beside the runner's, since a v2 group holding processes cannot delegate controllers).
 * `create` returns `undefined` when the host does not let the runner create them; the caller falls back to rlimits.
 */
export class RunCgroup {
  private constructor(
    private readonly dirs: string[],
    private readonly oomFile: string,
    private readonly pidsEventsFile: string,
  ) {}

  /** The `cgroup.procs` files a process writes its pid into to join. */
  get procsFiles(): string[] {
    return this.dirs.map((d) => path.join(d, 'cgroup.procs'));
  }

  /**
   * `owner` tells this runner's groups from other runners' on the same host (they share the cgroup parents): the
   * groups are named `conveyor-<owner>-<name>`. `reopen`: the groups a previous helper made for a run whose agent
   * outlived it, taken as they are (undefined when they are gone).
   */
  static async create(
    owner: string,
    name: string,
    limits: { memoryBytes: number; maxProcesses: number },
    reopen = false,
  ): Promise<RunCgroup | undefined> {
    const created: string[] = [];
    const make = async (dir: string, settings: Record<string, string>) => {
      if (reopen) {
        await readFile(path.join(dir, 'cgroup.procs'));
        return dir;
      }
      await mkdir(dir);
      created.push(dir);
      for (const [file, value] of Object.entries(settings)) await writeFile(path.join(dir, file), value);
      return dir;
    };
    const group = `conveyor-${owner}-${name}`;
    try {
      const where = await parents();
      if (!where) return undefined;
      if ('v1' in where) {
        const memory = await make(path.join(where.v1.memory, group), {
          'memory.limit_in_bytes': String(limits.memoryBytes),
        });
        const pids = await make(path.join(where.v1.pids, group), {
          'pids.max': String(limits.maxProcesses),
        });
        return new RunCgroup(
          [memory, pids],
          path.join(memory, 'memory.oom_control'),
          path.join(pids, 'pids.events'),
        );
      }
      await mkdir(where.v2, { recursive: true });
      await writeFile(path.join(where.v2, 'cgroup.subtree_control'), '+memory +pids');
      const dir = await make(path.join(where.v2, group), {
        'memory.max': String(limits.memoryBytes),
        'pids.max': String(limits.maxProcesses),
      });
      await writeFile(path.join(dir, 'memory.swap.max'), '0').catch(() => undefined);
      return new RunCgroup([dir], path.join(dir, 'memory.events'), path.join(dir, 'pids.events'));
    } catch {
      for (const dir of created) await rmdir(dir).catch(() => undefined);
      return undefined;
    }
  }

  /**
   * Removes the empty groups a previous instance of this runner left (a crash skips `destroy`); called before this
   * one opens any run, so every `conveyor-<owner>-` group is a leftover. Groups still holding processes stay (the
   * kernel refuses their removal anyway), and so does every other runner's group: other owners, other names.
   */
  static async removeStale(owner: string): Promise<string[]> {
    const where = await parents();
    if (!where) return [];
    const dirs = 'v1' in where ? [where.v1.memory, where.v1.pids] : [where.v2];
    const removed: string[] = [];
    for (const parent of dirs) {
      const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (!entry.isDirectory() || !entry.name.startsWith(`conveyor-${owner}-`)) continue;
        const dir = path.join(parent, entry.name);
        const procs = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => 'unreadable');
        if (procs.trim() !== '') continue;
        await rmdir(dir).then(
          () => removed.push(dir),
          () => undefined,
        );
      }
    }
    return removed;
  }

  /** Processes the kernel killed for exceeding the memory limit (both versions report `oom_kill N`). */
  oomKills(): Promise<number> {
    return counter(this.oomFile, 'oom_kill');
  }

  /** Forks refused for reaching the task limit. */
  forksRefused(): Promise<number> {
    return counter(this.pidsEventsFile, 'max');
  }

  /** Removes the groups once their processes are gone (the kernel refuses while any remain). */
  async destroy(): Promise<void> {
    for (const dir of this.dirs) {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          await rmdir(dir);
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
  }
}
