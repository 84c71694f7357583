import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';

export interface ConnectedWorker {
  worker_id: string;
  connection_id: string;
  hostname: string;
  version: string;
  capacity: number;
  active_runs: number;
  connected_at: string;
  last_heartbeat_at: string;
}

/**
 * The team's connected workers: connections not closed and heard from within `staleAfterMs`. A worker that
 * disconnects cleanly (or whose TCP connection drops) leaves at once; one that just goes silent leaves when its
 * last heartbeat is `staleAfterMs` old (docs/workers.md).
 */
export async function listConnectedWorkers(
  db: PrismaClient,
  caller: Caller,
  staleAfterMs: number,
  now = new Date(),
): Promise<{ workers: ConnectedWorker[] }> {
  const rows = await db.workerConnection.findMany({
    where: {
      teamId: caller.team_id,
      disconnectedAt: null,
      lastHeartbeatAt: { gt: new Date(now.getTime() - staleAfterMs) },
    },
    orderBy: [{ workerId: 'asc' }, { connectedAt: 'asc' }],
  });
  return {
    workers: rows.map((r) => ({
      worker_id: r.workerId,
      connection_id: r.id,
      hostname: r.hostname,
      version: r.version,
      capacity: r.capacity,
      active_runs: r.activeRuns,
      connected_at: r.connectedAt.toISOString(),
      last_heartbeat_at: r.lastHeartbeatAt.toISOString(),
    })),
  };
}
