import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import type { Readiness } from '@conveyor/runtime';
import { authenticateApiKey } from '../auth/auth-service';
import { listRuns } from '../runs/list-runs';
import type { OrchestratorHandlers } from './grpc-server';
import { unary } from './unary-handler';

export interface HandlerDeps {
  db: PrismaClient;
  readiness: Readiness;
  logger: Logger;
}

/** Every request acting for someone must carry the caller the gateway authenticated. */
export function requireCaller(caller: Caller__Output | null): Caller__Output {
  if (!caller?.team_id) throw new AppError('authentication_required', 'Missing caller');
  return caller;
}

/** Maps each RPC to its domain function; the domain functions know nothing about gRPC. */
export function orchestratorHandlers({ db, readiness, logger }: HandlerDeps): OrchestratorHandlers {
  return {
    auth: {
      Authenticate: unary(logger, 'Authenticate', async (req) => ({ caller: await authenticateApiKey(db, req.api_key) })),
    },
    runs: {
      ListRuns: unary(logger, 'ListRuns', async (req) => listRuns(db, requireCaller(req.caller), req)),
    },
    health: {
      Check: unary(logger, 'HealthCheck', async () => {
        const report = await readiness.report();
        const checks = Object.fromEntries(Object.entries(report.checks).map(([k, v]) => [k, v.ok ? 'ok' : (v.error ?? 'failed')]));
        return { ready: report.ready, checks };
      }),
    },
  };
}
