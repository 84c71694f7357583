import type { Logger } from '@conveyor/logger';
import type { RunServiceHandlers } from '@conveyor/proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import { runInsights, type RunInsightsDeps } from '../../insights/run-insights';

/** The console overview's aggregates; the gateway validated the windows (docs/console.md "Overview"). */
export function runInsightsHandler(
  deps: RunInsightsDeps & { logger: Logger },
): Pick<RunServiceHandlers, 'GetRunInsights'> {
  return {
    GetRunInsights: unary(deps.logger, 'GetRunInsights', (req) =>
      runInsights(deps, requireCaller(req.caller), {
        hours: req.hours,
        days: req.days,
        minutes: req.minutes,
      }),
    ),
  };
}
