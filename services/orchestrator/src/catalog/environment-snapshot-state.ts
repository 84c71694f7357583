import type { EnvironmentSnapshot, PrismaClient } from '@conveyor/db';
import type { RunEvent } from '@conveyor/run-events';

type SnapshotEvent = Extract<RunEvent, { kind: 'environment_snapshot' }>;

/**
 * Keeps what a run's runner said of its environment's snapshot (`environment_snapshot` events, docs/snapshots.md
 * "State in the API") as the state for the run's team: the batch's last state, and the last snapshot ID it named
 * (a report without one keeps the stored ID). Runs without an environment have nothing to keep.
 */
export async function recordSnapshotStates(
  db: PrismaClient,
  runId: string,
  events: RunEvent[],
  now: Date,
): Promise<void> {
  const reports = events.filter((e): e is SnapshotEvent => e.kind === 'environment_snapshot');
  const last = reports.at(-1);
  if (!last) return;
  const run = await db.run.findUnique({
    where: { id: runId },
    select: { environmentId: true, teamId: true },
  });
  if (!run?.environmentId) return;
  const snapshotId = reports.findLast((e) => e.snapshot_id)?.snapshot_id;
  const state = { state: last.state, runId, updatedAt: now, ...(snapshotId ? { snapshotId } : {}) };
  await db.environmentSnapshot.upsert({
    where: { environmentId_teamId: { environmentId: run.environmentId, teamId: run.teamId } },
    create: { environmentId: run.environmentId, teamId: run.teamId, ...state },
    update: state,
  });
}

/** The caller's team's snapshot state of each environment (another team's, a guest's, is never read). */
export async function snapshotStates(
  db: PrismaClient,
  teamId: string,
  environmentIds: string[],
): Promise<Map<string, EnvironmentSnapshot>> {
  if (!environmentIds.length) return new Map();
  const rows = await db.environmentSnapshot.findMany({
    where: { teamId, environmentId: { in: environmentIds } },
  });
  return new Map(rows.map((r) => [r.environmentId, r]));
}
