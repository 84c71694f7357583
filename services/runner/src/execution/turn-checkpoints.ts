import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { TurnMark } from '../harness/harness';
import type { RunSandbox } from '../sandbox/run-sandbox';

/** The format of a checkpoint's record: a runner refuses one of a version it does not know. */
export const CHECKPOINT_VERSION = 1;

const recordSchema = z.object({
  version: z.number().int().positive(),
  /** The agent's model turns completed when the workspace was copied. */
  turn: z.number().int().nonnegative(),
  /** How often the run already went on from a checkpoint (RUN_MAX_RESUMPTIONS caps it). */
  resumptions: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  takenAt: z.number().int().positive(),
});
export type CheckpointRecord = z.infer<typeof recordSchema>;

/** tar exits 1 when a file changed while it was read (the agent works on): the copy is still whole. */
const tarSucceeded = (code: number | null) => code === 0 || code === 1;

/** Exit status of the copy when the session does not hold the turn yet. */
const NOT_YET = 3;
/**
 * `sh -c SCRIPT sh GLOB TEXT WORKSPACE`: the workspace as a tar on stdout, once the session file matching GLOB exists
 * and holds TEXT (IFS= keeps a path with spaces whole while the unquoted glob still expands).
 */
const COPY_SCRIPT = [
  'glob=$1; text=$2; dir=$3; IFS=; set -- $glob',
  `[ -f "$1" ] || exit ${NOT_YET}`,
  `[ -z "$text" ] || grep -qF -- "$text" "$1" || exit ${NOT_YET}`,
  'exec tar -C "$dir" -cf - .',
].join('\n');

/**
 * The last turn of each run's agent, kept by the runner outside the sandbox (docs/run-lifecycle.md "Lost agents"):
 * a tar of the whole workspace — which holds the run's HOME and so the CLI's session file — taken from inside the
 * sandbox after every model turn, in a directory of the runner's own (mode 0700), replaced atomically, deleted when
 * the execution ends. Where the sandbox goes away around the agent, the run goes on from it in a new sandbox.
 */
export class TurnCheckpoints {
  constructor(private readonly dir: string) {}

  of(runId: string): RunCheckpoint {
    return new RunCheckpoint(path.join(this.dir, path.basename(runId)));
  }
}

export class RunCheckpoint {
  constructor(private readonly dir: string) {}

  private get archive() {
    return path.join(this.dir, 'workspace.tar');
  }

  private get recordFile() {
    return path.join(this.dir, 'checkpoint.json');
  }

  /** The run's checkpoint, or undefined when none was taken; throws naming the version it does not know. */
  async latest(): Promise<CheckpointRecord | undefined> {
    const text = await readFile(this.recordFile, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return undefined; // written through a rename: only a disk fault leaves it cut short
    }
    const parsed = recordSchema.safeParse(json);
    if (!parsed.success) return undefined;
    if (parsed.data.version > CHECKPOINT_VERSION)
      throw new Error(
        `its checkpoint has format version ${parsed.data.version}, newer than this runner's ${CHECKPOINT_VERSION}`,
      );
    return parsed.data;
  }

  /**
   * Copies the workspace out of the sandbox as turn `turn`, once its session holds the turn (`mark`): false when it
   * does not yet (the CLI writes its session file just after it reports the turn). The previous checkpoint stays
   * until this one is whole.
   */
  async take(
    sandbox: RunSandbox,
    env: Record<string, string>,
    turn: number,
    mark?: TurnMark,
  ): Promise<boolean> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${this.archive}.tmp`;
    const argv: [string, ...string[]] = mark
      ? ['/bin/sh', '-c', COPY_SCRIPT, 'sh', mark.sessionGlob, mark.holds ?? '', sandbox.workspaceDir]
      : ['tar', '-C', sandbox.workspaceDir, '-cf', '-', '.'];
    const proc = sandbox.exec({ argv, env, network: false });
    proc.stderr.resume();
    const [exit] = await Promise.all([
      proc.exited,
      pipeline(proc.stdout, createWriteStream(temporary, { mode: 0o600 })),
    ]);
    if (mark && exit.code === NOT_YET) return false;
    if (!tarSucceeded(exit.code)) throw new Error(`the workspace copy exited with ${exit.code}`);
    const { size } = await stat(temporary);
    const resumptions = (await this.latest())?.resumptions ?? 0;
    await rename(temporary, this.archive);
    await this.write({ version: CHECKPOINT_VERSION, turn, resumptions, bytes: size, takenAt: Date.now() });
    return true;
  }

  /**
   * Writes the checkpoint's workspace into a new sandbox's (from inside it, as the run's own user): from the sandbox's
   * own mount of it where the backend made one, else streamed in.
   */
  async restore(sandbox: RunSandbox, env: Record<string, string>): Promise<void> {
    if (sandbox.restoreCheckpoint) return sandbox.restoreCheckpoint();
    const proc = sandbox.exec({
      argv: ['tar', '-C', sandbox.workspaceDir, '--no-same-owner', '-xf', '-'],
      env,
      stdin: 'pipe',
      network: false,
    });
    let stderr = '';
    proc.stdout.resume();
    proc.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    const [exit] = await Promise.all([proc.exited, pipeline(createReadStream(this.archive), proc.stdin!)]);
    if (exit.code !== 0) throw new Error(`the workspace could not be restored: ${stderr.trim()}`);
  }

  /** Counts one more resumption from the checkpoint. */
  async resumed(record: CheckpointRecord): Promise<void> {
    await this.write({ ...record, resumptions: record.resumptions + 1 });
  }

  async drop(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  private async write(record: CheckpointRecord): Promise<void> {
    const temporary = `${this.recordFile}.tmp`;
    await writeFile(temporary, JSON.stringify(record), { mode: 0o600 });
    await rename(temporary, this.recordFile);
  }
}

/** How often, and how far apart, a copy waits for the session to hold its turn. */
const SESSION_TRIES = 25;
const SESSION_RETRY_MS = 200;

/**
 * Takes a run's checkpoints as its agent completes turns, one at a time: a turn that completes while a copy runs is
 * copied once that one is done (the latest turn wins). A failed copy leaves the previous checkpoint.
 */
export class TurnCheckpointer {
  private running: Promise<void> | undefined;
  private pending = false;
  private mark: TurnMark | undefined;

  constructor(
    private readonly checkpoint: RunCheckpoint,
    private readonly copy: () => { sandbox: RunSandbox; env: Record<string, string> },
    private turns: number,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /** The agent completed a model turn; `mark`: what its session holds once the turn is written to it. */
  turn(mark?: TurnMark): void {
    this.turns++;
    this.mark = mark;
    if (this.running) {
      this.pending = true;
      return;
    }
    this.running = this.takeUntilCurrent().finally(() => (this.running = undefined));
  }

  /** Settles once no copy runs (before the run goes on from the checkpoint). */
  async settled(): Promise<void> {
    await this.running;
  }

  private async takeUntilCurrent(): Promise<void> {
    let tries = 0;
    do {
      this.pending = false;
      const { sandbox, env } = this.copy();
      const taken = await this.checkpoint.take(sandbox, env, this.turns, this.mark).catch((err: unknown) => {
        this.onFailure(err);
        return true;
      });
      if (taken) tries = 0;
      // Its session not written yet: again shortly, a bounded number of times (a later turn also takes it).
      else if (++tries < SESSION_TRIES) {
        this.pending = true;
        await new Promise((resolve) => setTimeout(resolve, SESSION_RETRY_MS));
      } else this.onFailure(new Error(`the session did not hold turn ${this.turns}`));
    } while (this.pending);
  }
}
