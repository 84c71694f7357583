import type { Logger } from '@conveyor/logger';
import type { RunnerServiceHandlers } from '@conveyor/proto';
import { unary } from '../unary-handler';
import { adoptRuns, releaseRunLease, saveRunLease, type RunLeaseDeps } from '../../runner/run-leases';

/** The run leases' RPCs of RunnerService (docs/sandbox.md "Run leases"); records are never logged, only run IDs. */
export function runLeaseHandlers(
  deps: RunLeaseDeps & { logger: Logger },
): Pick<RunnerServiceHandlers, 'SaveRunLease' | 'ReleaseRunLease' | 'AdoptRuns'> {
  const { logger } = deps;
  return {
    SaveRunLease: unary(logger, 'SaveRunLease', async (req) => {
      await saveRunLease(deps, req);
      return {};
    }),
    ReleaseRunLease: unary(logger, 'ReleaseRunLease', async (req) => {
      await releaseRunLease(deps, req);
      logger.info(
        { runId: req.run_id, execution: req.execution, runnerId: req.runner_id },
        'run lease released',
      );
      return {};
    }),
    AdoptRuns: unary(logger, 'AdoptRuns', async (req) => {
      const runs = await adoptRuns(deps, req);
      for (const run of runs)
        logger.info(
          {
            runId: run.run_id,
            execution: run.execution,
            runnerId: req.runner_id,
            previousRunnerId: run.previous_runner_id,
          },
          'run adopted by another runner',
        );
      return { runs };
    }),
  };
}
