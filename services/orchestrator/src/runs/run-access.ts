import { AppError, notFound } from '@conveyor/errors';
import type { PrismaClient, Prisma, Run } from '@conveyor/db';
import type { Caller } from '../auth/caller';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * The one visibility rule for runs: same team. A malformed ID, a missing run and another team's run all
 * answer the same 404, so existence never leaks.
 */
export async function findRunForCaller(db: Db, caller: Caller, runId: string): Promise<Run> {
  const run = UUID.test(runId)
    ? await db.run.findFirst({ where: { id: runId, teamId: caller.team_id } })
    : null;
  if (!run) throw notFound('Run');
  return run;
}

/**
 * The run whose run-scoped key the caller holds: the harness support endpoints write only to the harness's own run
 * (caller.run_id), never to one named in the request.
 */
export async function runOfRunKey(db: Db, caller: Caller): Promise<Pick<Run, 'id' | 'execution' | 'config'>> {
  if (!caller.run_id)
    throw new AppError('not_authorized', 'Harness support requires the run-scoped API key of a run');
  const run = await db.run.findFirst({
    where: { id: caller.run_id, teamId: caller.team_id },
    select: { id: true, execution: true, config: true },
  });
  if (!run) throw new AppError('not_authorized', 'The run of this key no longer exists');
  return run;
}

export const isUuid = (value: string): boolean => UUID.test(value);
