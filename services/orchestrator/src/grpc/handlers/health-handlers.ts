import type { Logger } from '@conveyor/logger';
import type { HealthServiceHandlers } from '@conveyor/proto';
import type { Readiness } from '@conveyor/runtime';
import { unary } from '../unary-handler';

/** HealthService: the readiness checks (PostgreSQL, Redis, Kafka, the run event feed), each reported by name. */
export function healthHandlers({
  readiness,
  logger,
}: {
  readiness: Readiness;
  logger: Logger;
}): HealthServiceHandlers {
  return {
    Check: unary(logger, 'HealthCheck', async () => {
      const report = await readiness.report();
      const checks = Object.fromEntries(
        Object.entries(report.checks).map(([k, v]) => [k, v.ok ? 'ok' : (v.error ?? 'failed')]),
      );
      return { ready: report.ready, checks };
    }),
  };
}
