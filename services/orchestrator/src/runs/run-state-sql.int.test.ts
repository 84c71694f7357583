import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { RUN_EVENT_TYPES, RUN_STATES } from '@conveyor/run-events';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { runDeps, teamAdmin } from '../test-support/run-scene';
import { createRun } from './create-run';
import { canTransition, RUNNER_PROGRESS } from './run-state-machine';
import { sqlCanTransition, sqlProgressRank, sqlProgressState } from './run-state-sql';

/** The SQL that repeats the state machine, run in PostgreSQL and compared with the TypeScript it must agree with. */
describe('the run state machine in SQL, over real PostgreSQL', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let pg: Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    pg = new Client({ connectionString: database.url });
    await pg.connect();
  });

  afterAll(async () => {
    await pg.end();
    await db.$disconnect();
    await database.drop();
  });

  it('allows in SQL exactly the moves TRANSITIONS allows', async () => {
    const pairs = RUN_STATES.flatMap((from) => RUN_STATES.map((to) => [from, to] as const));
    const { rows } = await pg.query<{ from: string; to: string; allowed: boolean }>(
      `SELECT p.from, p.to, ${sqlCanTransition('p.from', 'p.to')} AS allowed
         FROM jsonb_to_recordset($1::jsonb) AS p("from" text, "to" text)`,
      [JSON.stringify(pairs.map(([from, to]) => ({ from, to })))],
    );
    expect(rows).toEqual(pairs.map(([from, to]) => ({ from, to, allowed: canTransition(from, to) })));
  });

  it("ranks the runner's progress and maps each rank back to its state", async () => {
    const { rows } = await pg.query<{ state: string; rank: number | null; back: string | null }>(
      `SELECT s.state, ${sqlProgressRank('s.state')} AS rank, ${sqlProgressState(sqlProgressRank('s.state'))} AS back
         FROM unnest($1::text[]) WITH ORDINALITY AS s(state, ord) ORDER BY s.ord`,
      [RUN_STATES],
    );
    expect(rows).toEqual(
      RUN_STATES.map((state) => {
        const rank = (RUNNER_PROGRESS as readonly string[]).indexOf(state) + 1 || null;
        return { state, rank, back: rank ? state : null };
      }),
    );
  });

  // The record_outbound_event trigger (migration 20261125200000_event_endpoints) names the outbound types in SQL.
  it('records an outbound event for exactly the types of RUN_EVENT_TYPES', async () => {
    const caller = await teamAdmin(db, 'Outbound types');
    await db.eventEndpoint.create({
      data: {
        id: `ep_${randomBytes(6).toString('hex')}`,
        teamId: caller.team_id,
        url: 'https://receiver.example/events',
        eventTypes: ['*'],
        secretCiphertext: randomBytes(16),
        secretKeyId: 'k',
      },
    });
    const run = await createRun(runDeps(db), caller, { prompt: 'p', source: 'API' });
    const kinds = [
      ...RUN_STATES.map((to) => ({
        kind: 'state_changed',
        data: { kind: 'state_changed', from: 'QUEUED', to },
      })),
      { kind: 'artifact', data: { kind: 'artifact', artifact_type: 'PLAN', data: {} } },
      { kind: 'message', data: { kind: 'message', role: 'agent', text: 'hi' } },
    ];
    for (const event of kinds)
      await db.runEvent.create({
        data: { runId: run.runId, execution: 1, kind: event.kind, data: event.data },
      });
    const recorded = await db.outboundEvent.findMany({ where: { runId: run.runId }, select: { type: true } });
    // The run's own QUEUED event at creation is one of them too.
    expect(new Set(recorded.map((e) => e.type))).toEqual(new Set(RUN_EVENT_TYPES));
    const expected = RUN_STATES.filter((s) =>
      (RUN_EVENT_TYPES as readonly string[]).includes(`run.${s.toLowerCase()}`),
    );
    expect(recorded.filter((e) => e.type !== 'run.artifact_reported')).toHaveLength(expected.length + 1);
  });
});
