import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';

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

  static async create(
    name: string,
    limits: { memoryBytes: number; maxProcesses: number },
  ): Promise<RunCgroup | undefined> {
    const own = await readFile('/proc/self/cgroup', 'utf8').catch(() => '');
    const v1 = (controller: string) =>
      new RegExp(`^\\d+:(?:[^:]*,)?${controller}(?:,[^:]*)?:(.*)$`, 'm').exec(own)?.[1];
    const created: string[] = [];
    const make = async (dir: string, settings: Record<string, string>) => {
      await mkdir(dir);
      created.push(dir);
      for (const [file, value] of Object.entries(settings)) await writeFile(path.join(dir, file), value);
      return dir;
    };
    try {
      const memoryV1 = v1('memory');
      const pidsV1 = v1('pids');
      if (memoryV1 !== undefined && pidsV1 !== undefined) {
        const memory = await make(path.join(CGROUP_ROOT, 'memory', memoryV1, `conveyor-${name}`), {
          'memory.limit_in_bytes': String(limits.memoryBytes),
        });
        const pids = await make(path.join(CGROUP_ROOT, 'pids', pidsV1, `conveyor-${name}`), {
          'pids.max': String(limits.maxProcesses),
        });
        return new RunCgroup(
          [memory, pids],
          path.join(memory, 'memory.oom_control'),
          path.join(pids, 'pids.events'),
        );
      }
      const v2 = /^0::(.*)$/m.exec(own)?.[1];
      if (v2 === undefined) return undefined;
      const ownDir = path.join(CGROUP_ROOT, v2);
      const base = path.join(v2 === '/' ? ownDir : path.dirname(ownDir), 'conveyor-sandbox');
      await mkdir(base, { recursive: true });
      await writeFile(path.join(base, 'cgroup.subtree_control'), '+memory +pids');
      const dir = await make(path.join(base, name), {
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
