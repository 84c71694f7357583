import type { BlobStore } from '@conveyor/blob-store';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Counter } from '@conveyor/metrics';
import { TERMINAL_STATES } from '@conveyor/run-events';
import { BackgroundLoop } from '@conveyor/runtime';
import { harnessSessionKey } from '../runner/harness-sessions';
import { conversationTranscriptKey, executionTranscriptKey, runTranscriptKey } from '../runs/transcript';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RunRetentionOptions {
  /** The installation default in days (RUN_RETENTION_DAYS); 0 = off. A team's `runRetentionDays` overrides it. */
  defaultDays: number;
  /** Runs deleted per statement, so a large backlog never holds long locks. */
  batchSize: number;
}

interface ExpiredRun {
  id: string;
  execution: number;
  conversationId: string;
  artifactKeys: string[];
  artifactCount: number;
  handoffKeys: string[];
}

/** Every blob a run may have left in the store, whichever of them exist. */
function blobKeysOf(run: ExpiredRun): string[] {
  const transcripts = Array.from({ length: run.execution }, (_, i) => executionTranscriptKey(run.id, i + 1));
  return [
    ...transcripts,
    runTranscriptKey(run.id),
    // The conversation's combined transcript holds this run's; the next request rebuilds it from the runs left.
    conversationTranscriptKey(run.conversationId),
    harnessSessionKey(run.id),
    ...run.artifactKeys,
    ...run.handoffKeys,
  ];
}

/**
 * Deletes one batch of a team's expired runs: finished (terminal state), no debug agent in their session, last
 * updated before `cutoff`. The conditions are checked again by the DELETE itself on the locked rows, so a run a
 * follow-up revives meanwhile (back to QUEUED) is never deleted; rows other replicas hold are skipped. Events,
 * artifacts, follow-ups, attachments and run keys go by cascade; the artifacts' and handoff files' blob keys are read
 * in the same statement (its snapshot still sees the rows the cascade removes).
 */
async function deleteExpiredBatch(
  db: PrismaClient,
  teamId: string,
  cutoff: Date,
  batchSize: number,
): Promise<ExpiredRun[]> {
  const terminal = [...TERMINAL_STATES];
  return db.$queryRaw<ExpiredRun[]>`
    WITH doomed AS (
      DELETE FROM "Run" r
       WHERE r.id IN (
               SELECT id FROM "Run"
                WHERE "teamId" = ${teamId} AND state = ANY(${terminal}::"RunState"[])
                  AND "updatedAt" < ${cutoff} AND "debugExecution" IS NULL
                ORDER BY "updatedAt"
                LIMIT ${batchSize}
                FOR UPDATE SKIP LOCKED)
         AND r.state = ANY(${terminal}::"RunState"[]) AND r."updatedAt" < ${cutoff} AND r."debugExecution" IS NULL
      RETURNING r.id, r.execution, r."conversationId")
    SELECT d.id::text AS id, d.execution, d."conversationId"::text AS "conversationId",
           ARRAY(SELECT a."blobKey" FROM "Artifact" a WHERE a."runId" = d.id AND a."blobKey" IS NOT NULL)
             AS "artifactKeys",
           (SELECT count(*)::int FROM "Artifact" a WHERE a."runId" = d.id) AS "artifactCount",
           ARRAY(SELECT h."blobKey" FROM "RunHandoffAttachment" h WHERE h."runId" = d.id) AS "handoffKeys"
      FROM doomed d`;
}

/**
 * Run retention (docs/operations.md "Retention"): per team, finished runs older than the team's retention are
 * deleted with everything they own, in batches, then their blobs. A crash between the two leaves blobs no row
 * points at (counted under `blob_failures` when the store refuses; never a run without its transcript).
 */
export class RunRetention {
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly deps: { db: PrismaClient; blobs: BlobStore; logger: Logger; deleted: Counter<'kind'> },
    private readonly options: RunRetentionOptions & { intervalMs: number },
  ) {
    this.loop = new BackgroundLoop({
      name: 'run retention',
      dependency: 'postgres',
      intervalMs: options.intervalMs,
      run: async () => {
        await this.runOnce();
      },
      logger: deps.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One pass over every team with a retention; returns what it deleted. Every replica may run it. */
  async runOnce(now = new Date()): Promise<{ runs: number; artifacts: number; blobs: number }> {
    const { db, logger, deleted } = this.deps;
    const teams = await db.$queryRaw<Array<{ id: string; days: number }>>`
      SELECT id, COALESCE("runRetentionDays", ${this.options.defaultDays}::int) AS days
        FROM "Team" WHERE COALESCE("runRetentionDays", ${this.options.defaultDays}::int) > 0`;
    const total = { runs: 0, artifacts: 0, blobs: 0 };
    for (const team of teams) {
      const cutoff = new Date(now.getTime() - team.days * DAY_MS);
      for (;;) {
        const runs = await deleteExpiredBatch(db, team.id, cutoff, this.options.batchSize);
        const artifacts = runs.reduce((n, r) => n + r.artifactCount, 0);
        const blobs = await this.deleteBlobs(runs.flatMap(blobKeysOf));
        deleted.inc({ kind: 'runs' }, runs.length);
        deleted.inc({ kind: 'artifacts' }, artifacts);
        deleted.inc({ kind: 'blob_keys' }, blobs);
        total.runs += runs.length;
        total.artifacts += artifacts;
        total.blobs += blobs;
        if (runs.length < this.options.batchSize) break;
      }
    }
    if (total.runs > 0) logger.info(total, 'expired runs deleted');
    return total;
  }

  /** Deleting a missing key is not an error, so this counts the keys asked for, minus the failures. */
  private async deleteBlobs(keys: string[]): Promise<number> {
    let done = 0;
    for (const key of keys) {
      try {
        await this.deps.blobs.delete(key);
        done++;
      } catch (err) {
        this.deps.deleted.inc({ kind: 'blob_failures' });
        this.deps.logger.warn({ key, err: (err as Error).name }, 'expired blob not deleted');
      }
    }
    return done;
  }
}
