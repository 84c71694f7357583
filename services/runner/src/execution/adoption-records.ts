import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunAssignment__Output } from '@conveyor/proto';
import { z } from 'zod';
import type { EventReporter } from '../event-reporter';
import type { FollowupInbox } from '../harness/followup-inbox';
import type { OutputOffsets, SandboxProcess } from '../sandbox/run-sandbox';

const offsets = z.object({ stdout: z.number().int().nonnegative(), stderr: z.number().int().nonnegative() });

/**
 * What the next runner process needs to take an execution back (docs/run-lifecycle.md "Runner restarts"): the
 * assignment (without the attachments' bytes and the kept session, which only the harness's start reads), the runner
 * identity the orchestrator knows the execution by, the model token its agent holds, and its durable process.
 */
/**
 * The records' format. One written before records carried a version is of version 1 (the same fields); a record of a
 * newer version than this runner's was left by a newer runner (a rollback): not taken back, its run ends ERROR
 * naming why (`AdoptionRecords.list`).
 */
export const ADOPTION_RECORD_VERSION = 1;

const recordSchema = z.object({
  version: z.literal(ADOPTION_RECORD_VERSION).default(ADOPTION_RECORD_VERSION),
  runnerId: z.string().min(1),
  assignment: z.custom<RunAssignment__Output>(
    (value) => typeof value === 'object' && value !== null && 'run_id' in value,
  ),
  modelToken: z.string().optional(),
  agent: z.object({ processIndex: z.number().int().nonnegative(), offsets }),
  /**
   * The events not acknowledged when the record was written (some may have been recorded), to be sent again at their
   * positions; the output after `agent.offsets` holds the rest. Absent in a record of an older runner (no numbering).
   */
  events: z.object({ events_json: z.array(z.string()), first_event: z.number().int().positive() }).optional(),
  /**
   * The follow-ups handed to the harness, in order: the next process drops them when offered again and gives them
   * again to an agent lost after its last checkpoint. Absent in a record of an older runner (delivered as sent).
   */
  followups: z.array(z.object({ followup_id: z.string(), message: z.string() })).optional(),
});
export type AdoptionRecord = z.infer<typeof recordSchema>;

/** What is read of any record, whatever its version: enough to end its run. */
const targetSchema = z.object({
  version: z.number().int().positive(),
  runnerId: z.string().min(1),
  assignment: z.object({ run_id: z.string().min(1), execution: z.number().int().positive() }),
});

/** A record this runner does not take back (a newer runner's): its run ends ERROR with `reason`. */
export interface RefusedRecord {
  target: { run_id: string; execution: number; runner_id: string };
  reason: string;
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // cut short by a crash mid-write: nothing to take back
  }
};

/**
 * The runner's records of its executions whose agents run durable: one small file per run in a directory of the
 * runner's own (mode 0700: a record holds the run's keys), written when the agent starts, its output offsets every
 * half second while it runs, deleted when the execution ends.
 */
export class AdoptionRecords {
  constructor(private readonly dir: string) {}

  /**
   * The record of one execution: written when its agent starts durable (`started`, again for each later process of
   * it) and, through `reporter`'s write-ahead, before each batch of its events is sent: where the agent's output has
   * been turned into events (the output handled so far, not merely read) with the events of it not acknowledged yet.
   * `close(keep)` deletes it, or, when the runner stops and leaves the run to its next process, writes it a last time.
   */
  execution(
    runnerId: string,
    assignment: RunAssignment__Output,
    reporter: Pick<EventReporter, 'unacknowledged' | 'writeAheadTo'>,
    inbox: Pick<FollowupInbox, 'handedFollowups' | 'keepIn'>,
  ) {
    const runId = assignment.run_id;
    const stored = {
      runnerId,
      assignment: {
        ...assignment,
        attachments: assignment.attachments.map((a) => ({ ...a, data: '' })),
        session: null,
      },
    };
    let agent: { processIndex: number; handled: OutputOffsets; modelToken?: string } | undefined;
    let writing = Promise.resolve();
    const write = async () => {
      if (!agent) return;
      // One synchronous snapshot: the events so far are those of the output handled so far.
      const { processIndex, modelToken, handled } = agent;
      const record = {
        version: ADOPTION_RECORD_VERSION,
        ...stored,
        modelToken,
        agent: { processIndex, offsets: { ...handled } },
        events: reporter.unacknowledged(),
        followups: [...inbox.handedFollowups()],
      };
      await this.write(runId, record);
    };
    // A record that cannot be written leaves the previous one: the run is then not taken back as far, not stopped.
    const queue = () => (writing = writing.then(write).catch(() => undefined));
    reporter.writeAheadTo(queue);
    inbox.keepIn(queue);
    return {
      started: (
        started: { processIndex: number; proc: SandboxProcess; handled: OutputOffsets },
        modelToken?: string,
      ) => {
        if (!started.proc.offsets) return;
        agent = {
          processIndex: started.processIndex,
          handled: started.handled,
          ...(modelToken ? { modelToken } : {}),
        };
        void queue();
      },
      close: async (keep: boolean) => {
        await writing;
        if (keep) await write();
        else if (agent) await this.remove(runId);
      },
    };
  }

  /**
   * The records a previous runner process left: each an execution to take back, or, when a newer runner wrote it
   * (its version is unknown here), one to end.
   */
  async list(): Promise<{ records: AdoptionRecord[]; refused: RefusedRecord[] }> {
    const records: AdoptionRecord[] = [];
    const refused: RefusedRecord[] = [];
    for (const name of await readdir(this.dir).catch((): string[] => [])) {
      if (!name.endsWith('.json')) continue;
      const text = await readFile(path.join(this.dir, name), 'utf8').catch(() => undefined);
      const json = text === undefined ? undefined : parseJson(text);
      const target = targetSchema.safeParse(json);
      if (target.success && target.data.version > ADOPTION_RECORD_VERSION) {
        const { version, runnerId, assignment } = target.data;
        refused.push({
          target: { run_id: assignment.run_id, execution: assignment.execution, runner_id: runnerId },
          reason: `its adoption record has format version ${version}, newer than this runner's ${ADOPTION_RECORD_VERSION} (a newer runner left it)`,
        });
        continue;
      }
      const parsed = recordSchema.safeParse(json);
      if (!parsed.success) continue;
      const { assignment } = parsed.data;
      assignment.attachments = assignment.attachments.map((a) => ({ ...a, data: Buffer.alloc(0) }));
      records.push(parsed.data);
    }
    return { records, refused };
  }

  async remove(runId: string): Promise<void> {
    await rm(this.file(runId), { force: true });
  }

  private async write(runId: string, record: unknown): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const temporary = `${this.file(runId)}.tmp`;
    await writeFile(temporary, JSON.stringify(record), { mode: 0o600 });
    await rename(temporary, this.file(runId));
  }

  private file(runId: string): string {
    return path.join(this.dir, `${path.basename(runId)}.json`);
  }
}
