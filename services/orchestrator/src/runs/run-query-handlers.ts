import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { RunServiceHandlers } from '@conveyor/proto';
import { requireCaller } from '../grpc/require-caller';
import { unary } from '../grpc/unary-handler';
import { listRuns } from './list-runs';

/** Read-side RPCs of runs: listing and inspection. */
export function runQueryHandlers({ db, logger }: { db: PrismaClient; logger: Logger }): Pick<RunServiceHandlers, 'ListRuns'> {
  return {
    ListRuns: unary(logger, 'ListRuns', async (req) => listRuns(db, requireCaller(req.caller), req)),
  };
}
