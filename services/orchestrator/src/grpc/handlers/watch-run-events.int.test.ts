import * as grpc from '@grpc/grpc-js';
import { createPrismaClient, newUuid, type PrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import {
  createOrchestratorClients,
  loadOrchestratorProto,
  type Caller__Output,
  type OrchestratorClients,
  type RunEventMessage__Output,
} from '@conveyor/proto';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { RunEventFeed } from '../../runs/run-event-feed';
import { watchRunEvents } from './watch-run-events';

// WatchRunEvents over a real gRPC server and PostgreSQL: RunEvent rows inserted as the recorders do wake the stream
// through the insert trigger's NOTIFY.

jest.setTimeout(30_000);

let database: TestDatabase;
let db: PrismaClient;
let feed: RunEventFeed;
let server: grpc.Server;
let clients: OrchestratorClients;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
  const logger = createLogger({ service: 'test', level: 'silent' });
  feed = new RunEventFeed(database.url, logger);
  await feed.start();
  server = new grpc.Server();
  const service = loadOrchestratorProto().RunService as unknown as grpc.ServiceClientConstructor;
  server.addService(service.service, { WatchRunEvents: watchRunEvents({ db, feed, logger }) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  clients = createOrchestratorClients(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(async () => {
  clients?.close();
  await feed?.stop();
  server?.forceShutdown();
  await db?.$disconnect();
  await database?.drop();
});

async function newCaller(): Promise<Caller__Output> {
  const id = `team_${newUuid().slice(0, 8)}`;
  await db.team.create({ data: { id, name: id } });
  return {
    team_id: id,
    principal_type: 'USER',
    principal_id: 'u',
    role: 'MEMBER',
    api_key_id: '',
    run_id: '',
    display_name: '',
    email: '',
  };
}

async function newRun(caller: Caller__Output): Promise<string> {
  const id = newUuid();
  await db.run.create({
    data: {
      id,
      teamId: caller.team_id,
      title: 't',
      prompt: 'p',
      creatorId: 'u',
      executorId: 'u',
      conversationId: newUuid(),
      sessionId: newUuid(),
    },
  });
  return id;
}

const record = (runId: string, text: string) =>
  db.runEvent.create({ data: { runId, kind: 'agent_message', data: { kind: 'agent_message', text } } });

/** Collects `count` messages from a stream, then hangs up; `onFirst` runs once the first one arrived. */
function collect(
  caller: Caller__Output,
  runId: string,
  after: string,
  count: number,
  onFirst?: () => void,
): Promise<RunEventMessage__Output[]> {
  const stream = clients.runs.WatchRunEvents({ caller, run_id: runId, after_sequence: after });
  const got: RunEventMessage__Output[] = [];
  return new Promise((resolve, reject) => {
    stream.on('data', (m: RunEventMessage__Output) => {
      got.push(m);
      if (got.length === 1) onFirst?.();
      if (got.length === count) {
        stream.cancel();
        resolve(got);
      }
    });
    stream.on('error', (err: grpc.ServiceError) =>
      err.code === grpc.status.CANCELLED ? undefined : reject(err),
    );
  });
}

it('sends the events after the resume point, then each new one as it is recorded, in order and once', async () => {
  const caller = await newCaller();
  const runId = await newRun(caller);
  const first = await record(runId, 'one');
  await record(runId, 'two');
  let recordLive: Promise<unknown> = Promise.resolve();
  // Recorded only after the stream has caught up, so they can only arrive through the trigger's notifications; two
  // in one transaction (one coalesced notification).
  const streamed = collect(caller, runId, String(first.id), 4, () => {
    recordLive = record(runId, 'three').then(() =>
      db.$transaction([record(runId, 'four'), record(runId, 'five')]),
    );
  });
  const messages = await streamed;
  await recordLive;
  expect(messages.map((m) => (JSON.parse(m.data_json) as { text: string }).text)).toEqual([
    'two',
    'three',
    'four',
    'five',
  ]);
  const sequences = messages.map((m) => BigInt(m.sequence));
  expect(sequences.every((s, i) => i === 0 || s > sequences[i - 1]!)).toBe(true);
  expect(sequences[0]! > first.id).toBe(true);
});

it("answers another team's run like a missing one", async () => {
  const owner = await newCaller();
  const runId = await newRun(owner);
  await record(runId, 'private');
  const stranger = await newCaller();
  await expect(collect(stranger, runId, '0', 1)).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  await expect(collect(stranger, newUuid(), '0', 1)).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  expect(await collect(owner, runId, '0', 1)).toHaveLength(1);
});
