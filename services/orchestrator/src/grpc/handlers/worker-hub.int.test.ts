import { EventEmitter, once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { createPrismaClient, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import type { WorkerDownstream } from '@conveyor/proto';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { teamAdmin } from '../../test-support/run-scene';
import type { RunAssignment } from '../../runner/runner-messages';
import type { WorkerHello, WorkerLink } from '../../workers/worker-dispatch';
import { createWorkerToken } from '../../workers/worker-token';
import { guardService } from '../rpc-guard';
import { WorkerHub, type WorkerHubDispatch } from './worker-hub';

const logger = createLogger({ service: 'test', level: 'silent' });

/** The server side of one Connect stream: what the hub wrote, how it ended. */
class FakeStream extends EventEmitter {
  readonly written: WorkerDownstream[] = [];
  ended = false;
  failure?: grpc.ServiceError;
  constructor() {
    super();
    this.on('error', (err: grpc.ServiceError) => (this.failure ??= err));
  }
  write(message: WorkerDownstream): boolean {
    this.written.push(message);
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

/** WorkerDispatch's side, recorded; `connect` answers when the test releases it. */
class FakeDispatch implements WorkerHubDispatch {
  /** Emits the name of each method called, once its effect is recorded. */
  readonly calls = new EventEmitter();
  readonly hellos: WorkerHello[] = [];
  readonly links: WorkerLink[] = [];
  readonly heartbeats: Array<[string, number]> = [];
  readonly disconnected: string[] = [];
  dispatched = 0;
  private release: Array<() => void> = [];
  held = false;
  failWith?: Error;

  async connect(hello: WorkerHello, link: WorkerLink) {
    this.hellos.push(hello);
    this.links.push(link);
    this.calls.emit('connect');
    if (this.held) await new Promise<void>((resolve) => this.release.push(resolve));
    if (this.failWith) throw this.failWith;
    return { connectionId: `conn-${this.hellos.length}`, runnerId: `runner-${this.hellos.length}` };
  }
  heartbeat(connectionId: string, activeRuns: number): void {
    this.heartbeats.push([connectionId, activeRuns]);
  }
  disconnect(connectionId: string): void {
    this.disconnected.push(connectionId);
    this.calls.emit('disconnect');
  }
  async dispatch(): Promise<void> {
    this.dispatched++;
    this.calls.emit('dispatch');
  }
  releaseAll(): void {
    for (const resolve of this.release.splice(0)) resolve();
  }
}

/** Lets the peer guard's authentication (a resolved promise) hand the call to the hub. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkerHub: the Connect stream mapped onto WorkerDispatch (token over real PostgreSQL)', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  let teamId: string;
  let token: string;
  let tokenId: string;
  let otherTeamToken: string;
  let dispatch: FakeDispatch;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    teamId = (await teamAdmin(db, 'Hub')).team_id;
    ({ token, id: tokenId } = await createWorkerToken(db, { teamId, name: 'w' }));
    const other = (await teamAdmin(db, 'Other')).team_id;
    otherTeamToken = (await createWorkerToken(db, { teamId: other, name: 'w' })).token;
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  beforeEach(() => {
    dispatch = new FakeDispatch();
  });

  /** A stream opened through the real peer guard, as the worker endpoint authenticated it for `teamId`. */
  async function open(): Promise<FakeStream> {
    const hub = new WorkerHub(db, dispatch, logger, { heartbeatIntervalMs: 5_000, staleAfterMs: 30_000 });
    const guarded = guardService(
      'workers',
      { Connect: {} } as unknown as grpc.ServiceDefinition,
      hub.grpcHandlers().workers as unknown as grpc.UntypedServiceImplementation,
      async () => ({ kind: 'worker', teamId }),
      logger,
    );
    const stream = new FakeStream();
    (guarded.Connect as unknown as (call: unknown) => void)(stream);
    await settle();
    return stream;
  }
  const hello = (workerToken = token) => ({
    hello: { worker_token: workerToken, worker_id: 'w-1', hostname: 'box', version: '1.2', capacity: 3 },
  });

  it('records the hello with the token’s team, welcomes the worker, then dispatches; runs go down the stream', async () => {
    const stream = await open();
    const welcomed = once(dispatch.calls, 'dispatch');
    stream.emit('data', hello());
    await welcomed;
    expect(dispatch.hellos).toEqual([
      { teamId, tokenId, workerId: 'w-1', hostname: 'box', version: '1.2', capacity: 3 },
    ]);
    expect(stream.written).toEqual([
      { welcome: { connection_id: 'conn-1', runner_id: 'runner-1', heartbeat_interval_ms: 5_000 } },
    ]);
    const assignment = { run_id: 'r-1' } as RunAssignment;
    dispatch.links[0]!.send(assignment);
    expect(stream.written[1]).toEqual({ assignment });
    dispatch.links[0]!.close();
    expect(stream.ended).toBe(true);
  });

  it('forwards heartbeats of a welcomed connection and ignores those sent before the hello', async () => {
    const stream = await open();
    stream.emit('data', { heartbeat: { active_runs: 9 } });
    const welcomed = once(dispatch.calls, 'dispatch');
    stream.emit('data', hello());
    await welcomed;
    stream.emit('data', { heartbeat: { active_runs: 2 } });
    expect(dispatch.heartbeats).toEqual([['conn-1', 2]]);
  });

  it.each([
    ['an unknown token', 'cvw_AAAAAAAAAA_' + 'A'.repeat(43)],
    ['a token of another team than the stream’s', ''],
  ])('refuses %s with UNAUTHENTICATED and records nothing', async (_case, workerToken) => {
    const stream = await open();
    const failed = once(stream, 'error');
    stream.emit('data', hello(workerToken || otherTeamToken));
    await failed;
    expect(stream.failure).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(dispatch.hellos).toEqual([]);
  });

  it('refuses a second hello with FAILED_PRECONDITION', async () => {
    const stream = await open();
    stream.emit('data', hello());
    stream.emit('data', hello());
    expect(stream.failure).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
  });

  it('answers an invalid hello (the dispatcher’s invalid_request) with INVALID_ARGUMENT', async () => {
    dispatch.failWith = new AppError('invalid_request', 'worker_id must be 1-64 characters');
    const stream = await open();
    const failed = once(stream, 'error');
    stream.emit('data', hello());
    await failed;
    expect(stream.failure).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'worker_id must be 1-64 characters',
    });
  });

  it('forgets a connection whose stream closed while its hello was being recorded, and never welcomes it', async () => {
    dispatch.held = true;
    const stream = await open();
    const connecting = once(dispatch.calls, 'connect');
    stream.emit('data', hello());
    await connecting;
    stream.emit('close');
    const forgotten = once(dispatch.calls, 'disconnect');
    dispatch.releaseAll();
    await forgotten;
    expect(dispatch.disconnected).toEqual(['conn-1']);
    expect(stream.written).toEqual([]);
    expect(dispatch.dispatched).toBe(0);
  });

  it.each(['cancelled', 'close', 'error'])(
    'disconnects the connection once when the stream is %s',
    async (event) => {
      const stream = await open();
      const welcomed = once(dispatch.calls, 'dispatch');
      stream.emit('data', hello());
      await welcomed;
      stream.emit(event, event === 'error' ? new Error('reset') : undefined);
      stream.emit('close');
      expect(dispatch.disconnected).toEqual(['conn-1']);
    },
  );

  it('ends its side when the worker ends the stream', async () => {
    const stream = await open();
    const welcomed = once(dispatch.calls, 'dispatch');
    stream.emit('data', hello());
    await welcomed;
    stream.emit('end');
    expect(dispatch.disconnected).toEqual(['conn-1']);
    expect(stream.ended).toBe(true);
  });
});
