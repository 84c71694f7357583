import type { Logger } from '@conveyor/logger';
import type { RunnerServiceHandlers } from '@conveyor/proto';
import { unary } from '../unary-handler';
import { runStates, type RunStatesDeps } from '../../runner/run-states';

/** GetRunStates of RunnerService: the orphan reconciler's one batched question (docs/sandbox.md). */
export function runStateHandlers(
  deps: RunStatesDeps & { logger: Logger },
): Pick<RunnerServiceHandlers, 'GetRunStates'> {
  return {
    GetRunStates: unary(deps.logger, 'GetRunStates', async (req) => ({
      runs: await runStates(deps, req.run_ids ?? []),
    })),
  };
}
