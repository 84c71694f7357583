import { createPrismaClient, sqlPool, type PrismaClient } from '@conveyor/db';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, waitForRunState } from './run-waits';

/**
 * How many attempts of each report lose their connection: more than grpc-js's own transparent retries of an
 * UNAVAILABLE call (4 attempts within about a second, packages/proto orchestrator-client.ts), so the runner's own
 * retries must carry the report through, as in a database outage of a few seconds.
 */
const LOST_ATTEMPTS = 6;

/**
 * Fault injection in the platform's own test database: the first LOST_ATTEMPTS statements that record a run's event
 * batch with the marked message, and the first that end a run SUCCEEDED, lose their connection the way they do when
 * the server restarts — the backend terminates itself (SQLSTATE 57P01 "terminating connection due to administrator
 * command") and its transaction rolls back. A sequence counts the attempts (nextval is not rolled back).
 */
const FAULTS = `
CREATE SEQUENCE fault_report;
CREATE SEQUENCE fault_complete;
CREATE FUNCTION fault_terminate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF nextval(TG_ARGV[0]::regclass) <= ${LOST_ATTEMPTS} THEN
    PERFORM pg_terminate_backend(pg_backend_pid());
    PERFORM pg_sleep(30); -- interrupted by the termination
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER fault_on_report BEFORE INSERT ON "RunEvent" FOR EACH ROW
  WHEN (NEW.kind = 'agent_message' AND NEW.data->>'text' = 'reported once')
  EXECUTE FUNCTION fault_terminate('fault_report');
CREATE TRIGGER fault_on_complete BEFORE UPDATE OF state ON "Run" FOR EACH ROW
  WHEN (NEW.state = 'SUCCEEDED' AND OLD.state <> 'SUCCEEDED')
  EXECUTE FUNCTION fault_terminate('fault_complete');`;

describe('no outcome is lost: reports the database dropped (57P01) are sent again and recorded once', () => {
  let platform: RunningPlatform;
  let db: PrismaClient;
  const query = <T extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    sqlPool(db).query<T>(sql, params);

  beforeAll(async () => {
    platform = await startPlatform();
    db = createPrismaClient(platform.databaseUrl);
    await sqlPool(db).query(FAULTS);
  });

  afterAll(async () => {
    // Only its pg pool was used (Prisma never connected, so $disconnect would leave the pool's sessions open).
    if (db) await sqlPool(db).end();
    await platform?.stop();
  });

  it('ends the run SUCCEEDED with each event once when its events report and its CompleteRun lose their connection', async () => {
    const created = await apiCall(platform, 'POST', '/agent/runs', {
      prompt: '@demo message reported once\n@demo sleep 1500\n@demo message the last one',
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    // Before the fix the completion was answered internal_error and never sent again: the run stayed INPROGRESS
    // until the lost-runner sweep ended it ERROR.
    const done = await waitForRunState(platform, runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 60_000);
    expect(done.state).toBe('SUCCEEDED');

    // Each report lost LOST_ATTEMPTS attempts to a dropped connection and was sent until one got through.
    for (const sequence of ['fault_report', 'fault_complete']) {
      const { rows } = await query<{ last_value: string }>(`SELECT last_value FROM ${sequence}`);
      expect([sequence, Number(rows[0]!.last_value)]).toEqual([sequence, LOST_ATTEMPTS + 1]);
    }
    const { rows: events } = await query<{ kind: string; data: { to?: string; text?: string } }>(
      `SELECT kind, data FROM "RunEvent" WHERE "runId" = $1 AND kind IN ('state_changed', 'agent_message')
        ORDER BY id`,
      [runId],
    );
    expect(events.map((e) => (e.kind === 'state_changed' ? `→${e.data.to}` : e.data.text))).toEqual([
      '→QUEUED',
      '→CLAIMED',
      '→PENDING',
      '→INPROGRESS',
      'reported once',
      'the last one',
      'Done: the task',
      '→SUCCEEDED',
    ]);
  });
});
