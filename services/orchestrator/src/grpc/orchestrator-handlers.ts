import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Readiness } from '@conveyor/runtime';
import { authenticateApiKey } from '../auth/auth-service';
import { runQueryHandlers } from '../runs/run-query-handlers';
import type { OrchestratorHandlers } from './grpc-server';
import { unary } from './unary-handler';

export interface HandlerDeps {
  db: PrismaClient;
  readiness: Readiness;
  logger: Logger;
}

/** Maps each RPC to its domain function; the domain functions know nothing about gRPC. */
export function orchestratorHandlers({ db, readiness, logger }: HandlerDeps): OrchestratorHandlers {
  return {
    auth: {
      Authenticate: unary(logger, 'Authenticate', async (req) => ({ caller: await authenticateApiKey(db, req.api_key) })),
    },
    runs: {
      ...runQueryHandlers({ db, logger }),
    },
    runner: {},
    health: {
      Check: unary(logger, 'HealthCheck', async () => {
        const report = await readiness.report();
        const checks = Object.fromEntries(Object.entries(report.checks).map(([k, v]) => [k, v.ok ? 'ok' : (v.error ?? 'failed')]));
        return { ready: report.ready, checks };
      }),
    },
  };
}
