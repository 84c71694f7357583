import type { PrismaClient } from '@conveyor/db';

/** The team's plan limit of usable agent identities (`available`, contract §6.1); the CLI sets it per team. */
export async function setAgentIdentityLimit(
  db: PrismaClient,
  teamId: string,
  limit: number,
): Promise<{ id: string; agentIdentityLimit: number }> {
  if (!Number.isInteger(limit) || limit < 0) throw new Error('the limit must be a non-negative integer');
  return db.team.update({
    where: { id: teamId },
    data: { agentIdentityLimit: limit },
    select: { id: true, agentIdentityLimit: true },
  });
}
