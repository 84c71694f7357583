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

/** Which of these runs are routed to a self-hosted worker, in one query (the outbox relay's batches). */
export async function selfHostedRunIds(
  db: PrismaClient | Prisma.TransactionClient,
  runIds: string[],
): Promise<Set<string>> {
  const ids = runIds.filter((id) => /^[0-9a-f-]{36}$/i.test(id));
  if (ids.length === 0) return new Set();
  const runs = await db.run.findMany({
    where: { id: { in: ids }, workerHost: { not: null } },
    select: { id: true },
  });
  return new Set(runs.map((r) => r.id));
}
