import type { RunAssignment__Output } from '@conveyor/proto';
import { z } from 'zod';
import type { EventReporter } from '../event-reporter';
import type { FollowupInbox } from '../harness/followup-inbox';
import type { OutputOffsets, SandboxProcess } from '../sandbox/run-sandbox';
import type { RecordStore } from './record-store';

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
  /** The sandbox's `reopenSecret` (Kubernetes: the run's gateway key). */
  reopenSecret: z.string().optional(),
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

/**
 * The runner's records of its executions whose agents run durable, written when the agent starts and before each
 * batch of its events, removed when the execution ends. One format and one writer whatever keeps them (`store`):
 * files on the runner's disk for the next process of the same runner (bubblewrap, record-files.ts), or the run's
 * lease in PostgreSQL for any replica (Kubernetes, lease-records.ts).
 */
export class AdoptionRecords {
  constructor(private readonly store: RecordStore) {}

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
    const target = { run_id: assignment.run_id, execution: assignment.execution, runner_id: runnerId };
    const stored = {
      runnerId,
      assignment: {
        ...assignment,
        attachments: assignment.attachments.map((a) => ({ ...a, data: '' })),
        session: null,
      },
    };
    let agent:
      | { processIndex: number; handled: OutputOffsets; modelToken?: string; reopenSecret?: string }
      | undefined;
    let writing = Promise.resolve();
    const write = async () => {
      if (!agent) return;
      // One synchronous snapshot: the events so far are those of the output handled so far.
      const { processIndex, modelToken, reopenSecret, handled } = agent;
      const record = {
        version: ADOPTION_RECORD_VERSION,
        ...stored,
        modelToken,
        reopenSecret,
        agent: { processIndex, offsets: { ...handled } },
        events: reporter.unacknowledged(),
        followups: [...inbox.handedFollowups()],
      };
      await this.store.write(target, JSON.stringify(record));
    };
    // Writes go one after another. Each caller sees its own write's failure: an event batch (or the completion) is
    // not sent past a record that was not written (docs/run-lifecycle.md "Runner restarts"); a later write is still
    // tried.
    const queue = () => {
      const written = writing.then(write);
      writing = written.catch(() => undefined);
      return written;
    };
    reporter.writeAheadTo(queue);
    inbox.keepIn(queue);
    return {
      started: (
        started: { processIndex: number; proc: SandboxProcess; handled: OutputOffsets },
        modelToken?: string,
        reopenSecret?: string,
      ) => {
        if (!started.proc.offsets) return;
        agent = {
          processIndex: started.processIndex,
          handled: started.handled,
          ...(modelToken ? { modelToken } : {}),
          ...(reopenSecret ? { reopenSecret } : {}),
        };
        // Not written: the next batch's write-ahead writes it (and holds the batch until it is).
        queue().catch(() => undefined);
      },
      close: async (keep: boolean) => {
        await writing;
        if (!agent) return;
        if (!keep) return this.store.remove(target);
        await write();
        await this.store.handOver(target);
      },
    };
  }

  /**
   * The records left to this runner (by its previous process, or handed over by another replica): each an execution
   * to take back, or, when a newer runner wrote it (its version is unknown here), one to end. A store that moves runs
   * between replicas names the new holder, which the execution is taken back as.
   */
  async list(limit?: number): Promise<{ records: AdoptionRecord[]; refused: RefusedRecord[] }> {
    const records: AdoptionRecord[] = [];
    const refused: RefusedRecord[] = [];
    for (const { json, holder } of await this.store.take(limit)) {
      const target = targetSchema.safeParse(json);
      if (target.success && target.data.version > ADOPTION_RECORD_VERSION) {
        const { version, runnerId, assignment } = target.data;
        refused.push({
          target: {
            run_id: assignment.run_id,
            execution: assignment.execution,
            runner_id: holder ?? runnerId,
          },
          reason: `its adoption record has format version ${version}, newer than this runner's ${ADOPTION_RECORD_VERSION} (a newer runner left it)`,
        });
        continue;
      }
      const parsed = recordSchema.safeParse(json);
      if (!parsed.success) continue;
      const { assignment } = parsed.data;
      assignment.attachments = assignment.attachments.map((a) => ({ ...a, data: Buffer.alloc(0) }));
      records.push(holder ? { ...parsed.data, runnerId: holder } : parsed.data);
    }
    return { records, refused };
  }

  /** Drops the record of an execution this runner will not take back (it ended it). */
  remove(target: RefusedRecord['target']): Promise<void> {
    return this.store.remove(target);
  }
}
