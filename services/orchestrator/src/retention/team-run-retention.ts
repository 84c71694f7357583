import type { PrismaClient } from '@conveyor/db';

/**
 * A team's own run retention in days (0 = keep forever), or `null` to follow the installation's RUN_RETENTION_DAYS;
 * the CLI sets it per team (docs/operations.md "Retention").
 */
export async function setTeamRunRetention(
  db: PrismaClient,
  teamId: string,
  days: number | null,
): Promise<{ id: string; runRetentionDays: number | null }> {
  if (days !== null && (!Number.isInteger(days) || days < 0 || days > 36_500))
    throw new Error('the retention must be a whole number of days from 0 (forever) to 36500, or "default"');
  return db.team.update({
    where: { id: teamId },
    data: { runRetentionDays: days },
    select: { id: true, runRetentionDays: true },
  });
}
