import { notFound } from '@conveyor/errors';
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

export const isUuid = (value: string): boolean => UUID.test(value);
