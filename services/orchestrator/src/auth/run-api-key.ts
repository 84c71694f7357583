import { newId, type Prisma, type Run } from '@conveyor/db';
import { generateApiKey } from './api-key';

/** How long a run-scoped key lives at most; it is revoked earlier, when its execution ends. */
export const RUN_API_KEY_TTL_MS = 12 * 60 * 60 * 1000;

/**
 * Mints the credential a harness uses for harness-support calls (report-artifact) and, for judge runs, scores.
 * It authenticates as the run's executor with `run_id` set (auth-service.ts), so the API can tell it apart from
 * the executor's own keys. Returns '' when the executor has no principal a key can belong to (no key is better
 * than a key acting for someone else).
 */
export async function mintRunApiKey(
  tx: Prisma.TransactionClient,
  run: Pick<Run, 'id' | 'teamId' | 'execution' | 'executorType' | 'executorId' | 'creatorType' | 'creatorId'>,
  now = new Date(),
): Promise<string> {
  let owner: { userId: string } | { agentIdentityId: string } | undefined;
  if (run.executorType === 'AGENT') {
    const agent = await tx.agentIdentity.findFirst({
      where: { id: run.executorId, teamId: run.teamId },
      select: { id: true },
    });
    if (agent) owner = { agentIdentityId: agent.id };
  } else {
    const candidates = [run.executorId, ...(run.creatorType === 'USER' ? [run.creatorId] : [])];
    const user = await tx.user.findFirst({
      where: { id: { in: candidates }, teamId: run.teamId },
      select: { id: true },
    });
    if (user) owner = { userId: user.id };
  }
  if (!owner) return '';
  const generated = generateApiKey();
  await tx.apiKey.create({
    data: {
      id: newId('key'),
      teamId: run.teamId,
      ...owner,
      runId: run.id,
      name: `run ${run.id} execution ${run.execution}`,
      prefix: generated.prefix,
      secretHash: generated.secretHash,
      expiresAt: new Date(now.getTime() + RUN_API_KEY_TTL_MS),
    },
  });
  return generated.key;
}

/** Called when an execution ends: its harness has nothing more to report. */
export async function revokeRunApiKeys(
  tx: Prisma.TransactionClient,
  runId: string,
  now = new Date(),
): Promise<void> {
  await tx.apiKey.updateMany({ where: { runId, revokedAt: null }, data: { revokedAt: now } });
}
