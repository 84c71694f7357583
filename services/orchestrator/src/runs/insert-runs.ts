import type { Prisma, PrismaClient, PrincipalType } from '@conveyor/db';
import type { RunEvent } from '@conveyor/run-events';
import type { TraceCarrier } from '@conveyor/tracing';
import { ENQUEUE_RUN } from './outbox-relay';

/** A run whose every value is decided and checked (create-run.ts), ready to be written QUEUED. */
export interface NewRun {
  id: string;
  teamId: string;
  title: string;
  prompt: string;
  mode: string;
  source: string;
  creatorType: PrincipalType;
  creatorId: string;
  executorType: PrincipalType;
  executorId: string;
  configName: string | null;
  modelId: string | null;
  environmentId: string | null;
  skillSpec: string | null;
  skillInstructions: string | null;
  environmentSpec: unknown;
  harness: string;
  workerHost: string | null;
  config: Record<string, unknown>;
  metadata: Record<string, string>;
  parentRunId: string | null;
  ancestorIds: string[];
  scheduleId: string | null;
  scheduleName: string | null;
  scheduleCron: string | null;
  conversationId: string;
  sessionId: string;
  createdAt: Date;
  attachments: Array<{ id: string; fileName: string; mimeType: string; data: Buffer }>;
  /** The trace the run was started in: kept on the row (a self-hosted worker continues it) and carried by its outbox
   * entry to the runner (docs/observability.md). */
  trace?: TraceCarrier;
}

/** Every new run starts with these two events: QUEUED, then the prompt as the first user message. */
export function firstEvents(prompt: string): RunEvent[] {
  return [
    { kind: 'state_changed', from: null, to: 'QUEUED' },
    { kind: 'user_message', text: prompt, source: 'prompt' },
  ];
}

/**
 * Writes runs, their first events, attachments and the outbox entries that enqueue them in ONE statement (data-modifying
 * CTEs; the foreign keys are checked at its end, when all rows exist), however many runs there are. A statement is
 * atomic by itself, so a lone create needs no transaction, and a batch (a webhook delivery chunk) costs one round trip.
 *
 * Raw SQL rather than Prisma's create/createMany on purpose: this is the hottest write of the platform, and the
 * profile of create-run under load (bench/README.md) spent most of the orchestrator's time in Prisma's query compiler
 * and in the five round trips of an interactive transaction. A column added to `Run` with neither a default nor a
 * value here fails every create in the test suite at once, so the two cannot drift apart unnoticed.
 */
export async function insertRuns(
  db: PrismaClient | Prisma.TransactionClient,
  runs: readonly NewRun[],
): Promise<void> {
  if (runs.length === 0) return;
  const rows = runs.map(({ attachments: _attachments, trace, createdAt, ...run }) => ({
    ...run,
    traceContext: trace ?? null,
    createdAt: createdAt.toISOString(),
  }));
  // `n` keeps the events in order, so their ids (the timeline's order) follow it.
  const events = runs
    .flatMap((run) =>
      firstEvents(run.prompt).map((data) => ({
        runId: run.id,
        kind: data.kind,
        data,
        createdAt: run.createdAt.toISOString(),
      })),
    )
    .map((event, n) => ({ ...event, n }));
  const attachments = runs.flatMap((run) =>
    run.attachments.map((a) => ({
      id: a.id,
      runId: run.id,
      fileName: a.fileName,
      mimeType: a.mimeType,
      data: a.data.toString('base64'),
    })),
  );
  await db.$executeRaw`
    WITH runs AS (
      INSERT INTO "Run" (id, "teamId", title, prompt, mode, source, "creatorType", "creatorId", "executorType",
        "executorId", "configName", "modelId", "environmentId", "skillSpec", "skillInstructions", "environmentSpec",
        harness, "workerHost", config, metadata, "parentRunId", "ancestorIds", "scheduleId", "scheduleName",
        "scheduleCron", "conversationId", "sessionId", "traceContext", "createdAt", "updatedAt")
      SELECT id, "teamId", title, prompt, mode, source, "creatorType"::"PrincipalType", "creatorId",
        "executorType"::"PrincipalType", "executorId", "configName", "modelId", "environmentId", "skillSpec",
        "skillInstructions", "environmentSpec", harness, "workerHost", config, metadata, "parentRunId", "ancestorIds",
        "scheduleId", "scheduleName", "scheduleCron", "conversationId", "sessionId", "traceContext", "createdAt",
        "createdAt"
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id uuid, "teamId" text, title text, prompt text,
        mode text, source text, "creatorType" text, "creatorId" text, "executorType" text, "executorId" text,
        "configName" text, "modelId" text, "environmentId" text, "skillSpec" text, "skillInstructions" text,
        "environmentSpec" jsonb, harness text, "workerHost" text, config jsonb, metadata jsonb, "parentRunId" uuid,
        "ancestorIds" text[], "scheduleId" text, "scheduleName" text, "scheduleCron" text, "conversationId" uuid,
        "sessionId" uuid, "traceContext" jsonb, "createdAt" timestamptz)
      RETURNING id, "traceContext"
    ), events AS (
      INSERT INTO "RunEvent" ("runId", execution, kind, data, "createdAt")
      SELECT "runId", 1, kind, data, "createdAt"
        FROM jsonb_to_recordset(${JSON.stringify(events)}::jsonb)
             AS e("runId" uuid, kind text, data jsonb, "createdAt" timestamptz, n int)
       ORDER BY n
    ), attachments AS (
      INSERT INTO "RunAttachment" (id, "runId", "fileName", "mimeType", data)
      SELECT id, "runId", "fileName", "mimeType", decode(data, 'base64')
        FROM jsonb_to_recordset(${JSON.stringify(attachments)}::jsonb)
             AS a(id uuid, "runId" uuid, "fileName" text, "mimeType" text, data text)
    )
    INSERT INTO "OutboxEntry" (kind, payload)
    SELECT ${ENQUEUE_RUN},
           jsonb_strip_nulls(jsonb_build_object('runId', id, 'execution', 1, 'trace', "traceContext"))
      FROM runs`;
}
