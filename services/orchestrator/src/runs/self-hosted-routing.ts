import type { PrismaClient, Prisma } from '@conveyor/db';

/**
 * Runs created with `config.worker_host` other than "warp" (Run.workerHost) belong to the team's self-hosted
 * worker of that ID: they never enter the cloud pool's BullMQ queue (the outbox relay skips them) and the pool's
 * ClaimRun refuses them; the WorkerService dispatcher claims them for a connected worker (docs/workers.md).
 */
export async function isSelfHostedRun(
  db: PrismaClient | Prisma.TransactionClient,
  runId: string,
): Promise<boolean> {
  if (!/^[0-9a-f-]{36}$/i.test(runId)) return false;
  const run = await db.run.findUnique({ where: { id: runId }, select: { workerHost: true } });
  return Boolean(run?.workerHost);
}
