import { AppError } from '@conveyor/errors';
import type { Prisma, PrismaClient } from '@conveyor/db';

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * `available` (contract §6.1): the team's oldest `agentIdentityLimit` identities (by creation time, then ID) are
 * usable; the rest exist but cannot run. Lowering the limit makes the newest ones unavailable, never the old ones.
 */
export async function availableIdentityIds(db: Db, teamId: string): Promise<Set<string>> {
  const team = await db.team.findUnique({ where: { id: teamId }, select: { agentIdentityLimit: true } });
  const limit = Math.max(0, team?.agentIdentityLimit ?? 0);
  if (limit === 0) return new Set();
  const oldest = await db.agentIdentity.findMany({
    where: { teamId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: limit,
    select: { id: true },
  });
  return new Set(oldest.map((i) => i.id));
}

/** A run executed by an identity beyond the plan limit is refused: 403 feature_not_available (docs/identities.md). */
export function assertIdentityAvailable(available: ReadonlySet<string>, identityId: string): void {
  if (!available.has(identityId)) {
    throw new AppError(
      'feature_not_available',
      `Agent identity ${identityId} is not available: the team's plan allows a limited number of agent identities and this one is beyond it`,
    );
  }
}
