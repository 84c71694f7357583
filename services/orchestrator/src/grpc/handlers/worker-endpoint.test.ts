import * as grpc from '@grpc/grpc-js';
import { createPrismaClient } from '@conveyor/db';
import { createLogger } from '@conveyor/logger';
import { loadOrchestratorProto, type RunnerServiceHandlers } from '@conveyor/proto';
import { guardService } from '../rpc-guard';
import { teamScopedRunReporting, workerTokenPeer } from './worker-endpoint';

const logger = createLogger({ service: 'test', level: 'silent' });
const RUN_ID = '0190b6b1-7a7e-7000-8000-000000000001';

describe('the worker endpoint while its database is down', () => {
  // A real client of a PostgreSQL that is not there: every query is refused at connect (nothing listens on port 1).
  const down = createPrismaClient('postgresql://conveyor@127.0.0.1:1/conveyor');
  const definition = (loadOrchestratorProto().RunnerService as unknown as grpc.ServiceClientConstructor)
    .service;
  const answered = (): RunnerServiceHandlers['CompleteRun'] => (_call, callback) =>
    callback(null, { cancel_requested: false, followups: [] });
  const reporting = teamScopedRunReporting(down, {
    CompleteRun: answered(),
  } as unknown as RunnerServiceHandlers);

  afterAll(() => down.$disconnect());

  /** Calls CompleteRun through the guard as the worker endpoint serves it; resolves with the gRPC status. */
  const completeRun = (authenticate: Parameters<typeof guardService>[3]) =>
    new Promise<grpc.status>((resolve) => {
      const guarded = guardService(
        'runner',
        definition,
        reporting as unknown as grpc.UntypedServiceImplementation,
        authenticate,
        logger,
      );
      const metadata = new grpc.Metadata();
      // Well-formed, so that checking it needs the database.
      metadata.set('authorization', `Bearer cvw_0123456789_${'a'.repeat(43)}`);
      const call = { request: { run_id: RUN_ID }, metadata };
      (guarded.CompleteRun as unknown as (c: unknown, cb: (err: grpc.ServiceError | null) => void) => void)(
        call,
        (err) => resolve(err ? err.code : grpc.status.OK),
      );
    });

  it("answers UNAVAILABLE (retryable: the worker sends its report again), not INTERNAL, when the worker's token cannot be checked", async () => {
    expect(await completeRun(workerTokenPeer(down))).toBe(grpc.status.UNAVAILABLE);
  });

  it("answers UNAVAILABLE, not INTERNAL, when the run's team cannot be checked", async () => {
    expect(await completeRun(async () => ({ kind: 'worker', teamId: 'team_1' }))).toBe(
      grpc.status.UNAVAILABLE,
    );
  });
});
