import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';

/** The member who registered an integration acts for it, as an automation's creator does for the automation. */
export const integrationCaller = (app: { teamId: string; createdById: string | null }): Caller => ({
  team_id: app.teamId,
  principal_type: 'USER',
  principal_id: app.createdById ?? '',
  role: 'ADMIN',
  api_key_id: '',
  run_id: '',
  display_name: '',
  email: '',
});

/** Adds values to a run's metadata (where an integration keeps where to answer). */
export async function setRunMetadata(
  db: PrismaClient,
  runId: string,
  values: Record<string, string>,
): Promise<void> {
  const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { metadata: true } });
  await db.run.update({
    where: { id: runId },
    data: { metadata: { ...((run.metadata ?? {}) as Record<string, string>), ...values } },
  });
}
