import { Client } from 'pg';

const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'];

/** One short-lived connection per question: the server under it is restarted by the suite. */
async function query<T>(databaseUrl: string, sql: string, params: unknown[]): Promise<T[]> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Runs created in [from, to) that are not in a terminal state. */
export const unfinishedRuns = (databaseUrl: string, from: Date, to: Date) =>
  query<{ id: string; state: string; execution: number }>(
    databaseUrl,
    `SELECT id, state, execution FROM "Run" WHERE "createdAt" >= $1 AND "createdAt" < $2 AND NOT (state::text = ANY($3))`,
    [from, to, TERMINAL],
  );

/**
 * Runs created in [from, to) that ended otherwise than their agent said. Every run the suite creates is a demo run
 * whose script says succeed, or a Claude Code run whose scripted model says so, so that is SUCCEEDED. Runs not ended
 * are `unfinishedRuns`' to report, not these: a run's `createdAt` is stamped before its row commits, so on a slow
 * machine a run created just before `to` can become visible only after `unfinishedRuns` found none left, and would
 * be listed here as QUEUED though nothing is wrong with it (the suite's last check waits for every such run).
 */
export const runsNotSucceeded = (databaseUrl: string, from: Date, to: Date) =>
  query<{ id: string; state: string; message: string | null }>(
    databaseUrl,
    `SELECT id, state::text AS state, "statusMessage" AS message FROM "Run"
      WHERE "createdAt" >= $1 AND "createdAt" < $2 AND state::text = ANY($3) AND state::text <> 'SUCCEEDED'`,
    [from, to, TERMINAL],
  );

/**
 * Runs that ended ERROR with one of these messages at or after `since`, whenever they were created: a runner's loss
 * ends the runs in flight on it, and on a slow machine those include runs created before the fault's window.
 */
export const runsEndedWith = (databaseUrl: string, since: Date, messages: string[]) =>
  query<{ id: string }>(
    databaseUrl,
    `SELECT id FROM "Run" WHERE state::text = 'ERROR' AND "endedAt" >= $1 AND "statusMessage" = ANY($2)`,
    [since, messages],
  );

/** Whether the run's agent has called a tool (its step runs). */
export const toolCalled = async (databaseUrl: string, id: string): Promise<boolean> =>
  (
    await query(
      databaseUrl,
      `SELECT 1 FROM "RunEvent" WHERE "runId" = $1::uuid AND kind = 'tool_call' LIMIT 1`,
      [id],
    )
  ).length > 0;

/** These runs' states and status messages. */
export const runOutcomes = (databaseUrl: string, ids: string[]) =>
  query<{ id: string; state: string; message: string | null }>(
    databaseUrl,
    `SELECT id, state::text AS state, "statusMessage" AS message FROM "Run" WHERE id = ANY($1::uuid[])`,
    [ids],
  );

/** How many of these runs have ended. */
export const endedCount = async (databaseUrl: string, ids: string[]): Promise<number> =>
  Number(
    (
      await query<{ n: string }>(
        databaseUrl,
        `SELECT count(*) AS n FROM "Run" WHERE id = ANY($1::uuid[]) AND state::text = ANY($2)`,
        [ids, TERMINAL],
      )
    )[0]!.n,
  );

/** Ends every connection to the database but this one, as a server restart or a failover does (SQLSTATE 57P01). */
export const terminateConnections = (databaseUrl: string) =>
  query(
    databaseUrl,
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    [],
  );

export const runState = async (databaseUrl: string, id: string): Promise<string | undefined> =>
  (await query<{ state: string }>(databaseUrl, `SELECT state FROM "Run" WHERE id = $1`, [id]))[0]?.state;

export const countRuns = async (databaseUrl: string, state: string): Promise<number> =>
  Number(
    (
      await query<{ n: string }>(databaseUrl, `SELECT count(*) AS n FROM "Run" WHERE state::text = $1`, [
        state,
      ])
    )[0]!.n,
  );

/**
 * Evidence of a run executed twice, from its timeline (RunEvent state changes) for runs created in [from, to):
 * more than one claim of the same execution, more than one start of a harness (a lost runner's run is queued again
 * only before its harness started), or more than one terminal state.
 */
export const doubleExecutions = (databaseUrl: string, from: Date, to: Date) =>
  query<{ run: string; what: string; n: string }>(
    databaseUrl,
    `WITH changes AS (
       SELECT e."runId" AS run, e.execution, e.data->>'to' AS "to"
       FROM "RunEvent" e JOIN "Run" r ON r.id = e."runId"
       WHERE r."createdAt" >= $1 AND r."createdAt" < $2 AND e.kind = 'state_changed')
     SELECT run, 'claimed execution ' || execution AS what, count(*) AS n FROM changes
       WHERE "to" = 'CLAIMED' GROUP BY run, execution HAVING count(*) > 1
     UNION ALL
     SELECT run, 'harness started', count(*) FROM changes WHERE "to" = 'INPROGRESS' GROUP BY run HAVING count(*) > 1
     UNION ALL
     SELECT run, 'ended', count(*) FROM changes WHERE "to" = ANY($3) GROUP BY run HAVING count(*) > 1`,
    [from, to, TERMINAL],
  );

/**
 * Accepted delivery IDs that the delivery log does not hold exactly once as Accepted and processed, with their counts.
 * Processed is when the automation's runs commit (delivery-processor.ts), after the entry itself: only then does every
 * run the delivery starts exist.
 */
export async function deliveriesNotRecordedOnce(
  databaseUrl: string,
  ids: string[],
): Promise<Array<{ id: string; accepted: number; processed: number }>> {
  const rows = await query<{ id: string; n: string; processed: string }>(
    databaseUrl,
    `SELECT "deliveryId" AS id, count(*) AS n, count("processedAt") AS processed FROM "WebhookDelivery"
     WHERE label = 'Accepted' AND "deliveryId" = ANY($1) GROUP BY 1`,
    [ids],
  );
  const counts = new Map(rows.map((r) => [r.id, r]));
  return ids
    .map((id) => ({
      id,
      accepted: Number(counts.get(id)?.n ?? 0),
      processed: Number(counts.get(id)?.processed ?? 0),
    }))
    .filter((d) => d.accepted !== 1 || d.processed !== 1);
}
