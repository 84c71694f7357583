import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { TIMELINE_KINDS } from '@conveyor/run-events';
import { findRunForCaller } from './run-access';

export interface TimelineEvent {
  id: string;
  kind: string;
  created_at: string;
  execution: number;
  data_json: string;
}

/**
 * Chronological lifecycle and setup events of a run, across all its executions: state changes, setup steps
 * and follow-up routing (TIMELINE_KINDS). Ordered by event ID, i.e. the order the orchestrator recorded them.
 */
export async function getTimeline(
  db: PrismaClient,
  caller: Caller,
  runId: string,
): Promise<{ events: TimelineEvent[] }> {
  const run = await findRunForCaller(db, caller, runId);
  const events = await db.runEvent.findMany({
    where: { runId: run.id, kind: { in: [...TIMELINE_KINDS] } },
    orderBy: { id: 'asc' },
  });
  return {
    events: events.map((e) => ({
      id: String(e.id),
      kind: e.kind,
      created_at: e.createdAt.toISOString(),
      execution: e.execution,
      data_json: JSON.stringify(e.data ?? {}),
    })),
  };
}
