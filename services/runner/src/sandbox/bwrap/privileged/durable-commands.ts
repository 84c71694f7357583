import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, lchown, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { z } from 'zod';
import { DURABLE_DIR, durableFiles, LOST_EXIT } from '../durable-files';

const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The keeper: a root shell in its own session between the helper and bwrap, so the agent's sandbox belongs to no
 * runner process (`bwrap --die-with-parent` follows the keeper, not the helper). It holds the input FIFO open
 * (read-write: a runner that dies is no EOF; SIGUSR1 closes it once the runner ended the input), sends the command's
 * output to files, and writes its exit status when it ends: `sh -c KEEPER keeper DIR INPUT argv…`, INPUT the FIFO or,
 * for a command given no input, /dev/null.
 */
const KEEPER = [
  'dir=$1; input=$2; shift 2',
  'exec 7<>"$dir/in.fifo"',
  'trap "exec 7>&-" USR1',
  '"$@" <"$input" >>"$dir/out" 2>>"$dir/err" 7>&- &',
  'child=$!',
  // `wait` returns early when the trap runs; the child's own status is the one after it is gone.
  'while :; do wait "$child"; rc=$?; kill -0 "$child" 2>/dev/null || break; done',
  'echo "$rc" >"$dir/exit.tmp" && mv "$dir/exit.tmp" "$dir/exit"',
].join('\n');

async function writeLostExit(files: ReturnType<typeof durableFiles>, signal: NodeJS.Signals): Promise<void> {
  const temporary = `${files.exit}.tmp`;
  await writeFile(temporary, `${LOST_EXIT} ${signal}\n`, { mode: 0o640 });
  await lchown(temporary, 0, (await stat(files.dir)).gid);
  await rename(temporary, files.exit);
}

/** What the helper keeps of a durable command, beside its files: enough for a later helper to take the run back. */
export const durableRecordSchema = z.object({
  uid: z.number().int().positive(),
  limits: z.object({
    diskBytes: z.number().int().positive(),
    memoryBytes: z.number().int().positive(),
    maxProcesses: z.number().int().positive(),
  }),
  socketsDir: z.string().startsWith('/'),
  /** When the run's sandbox was opened (epoch ms): its wall clock goes on across a restart. */
  openedAt: z.number().int().positive(),
  keeper: z.number().int().positive(),
});
export type DurableRecord = z.infer<typeof durableRecordSchema>;

/**
 * Whether the keeper still runs. A killed keeper whose helper is gone is re-parented, and where nothing reaps it (a
 * container's PID 1 that is not an init) it stays a zombie: that is not alive, its FIFO has no reader.
 */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

/**
 * Durable commands of the runs on one workspace root: started under a keeper, found again by a later helper.
 * Everything here is root's; the runner's group may read the directory (output, exit status) and the runner writes
 * the FIFO, which is its own.
 */
export class DurableCommands {
  constructor(
    private readonly root: string,
    private readonly runner: { uid: number; gid: number },
  ) {}

  /** Starts `hostArgv` under a keeper; `options` go to bwrap on fd 3. Returns the keeper's pid. */
  async start(
    runId: string,
    hostArgv: string[],
    options: Buffer,
    record: Omit<DurableRecord, 'keeper'>,
    input: boolean,
  ) {
    const files = durableFiles(this.root, runId);
    await mkdir(path.dirname(files.dir), { recursive: true, mode: 0o711 });
    await rm(files.dir, { recursive: true, force: true });
    await mkdir(files.dir, { mode: 0o750 });
    await lchown(files.dir, 0, this.runner.gid);
    await chmod(files.dir, 0o750);
    const fifo = spawnSync('mkfifo', ['-m', '600', files.input], { env: { PATH: HOST_PATH } });
    if (fifo.status !== 0) throw new Error(`mkfifo failed: ${fifo.stderr.toString().trim()}`);
    await lchown(files.input, this.runner.uid, this.runner.gid);
    const stdin = input ? files.input : '/dev/null';
    const keeper = spawn('/bin/sh', ['-c', KEEPER, 'keeper', files.dir, stdin, ...hostArgv], {
      env: { PATH: HOST_PATH },
      stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
      detached: true,
    });
    const fd3 = keeper.stdio[3] as Writable;
    fd3.on('error', () => undefined);
    fd3.end(options);
    keeper.unref();
    if (!keeper.pid) throw new Error('the keeper did not start');
    // Reaped by whoever is its parent then; the runner learns the end from the exit file. A keeper killed by a signal
    // wrote none: the sandbox went away around the agent, which the runner must tell from the agent's own end.
    keeper.on('error', () => undefined);
    keeper.once('exit', (_code, signal) => {
      if (signal && !existsSync(files.exit)) void writeLostExit(files, signal).catch(() => undefined);
    });
    await writeFile(files.record, JSON.stringify({ ...record, keeper: keeper.pid }), { mode: 0o600 });
    return keeper.pid;
  }

  /** The record of a run whose durable command still runs or has ended unread; undefined when nothing is left. */
  async find(runId: string): Promise<DurableRecord | undefined> {
    const files = durableFiles(this.root, runId);
    const text = await readFile(files.record, 'utf8').catch(() => undefined);
    const parsed = text === undefined ? undefined : durableRecordSchema.safeParse(JSON.parse(text));
    if (!parsed?.success) return undefined;
    return alive(parsed.data.keeper) || existsSync(files.exit) ? parsed.data : undefined;
  }

  /** Runs a later helper may take back, by run ID; the leftovers of any other are deleted. */
  async adoptable(): Promise<Map<string, DurableRecord>> {
    const dir = path.join(this.root, DURABLE_DIR);
    const found = new Map<string, DurableRecord>();
    for (const runId of await readdir(dir).catch((): string[] => [])) {
      const record = await this.find(runId);
      if (record) found.set(runId, record);
      else await this.discard(runId);
    }
    return found;
  }

  async discard(runId: string): Promise<void> {
    await rm(durableFiles(this.root, runId).dir, { recursive: true, force: true });
  }
}
