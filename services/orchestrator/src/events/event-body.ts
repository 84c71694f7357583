import type { OutboundEvent, Prisma } from '@conveyor/db';

/** Artifacts listed in an event at most; the run's page (session_link) has the rest. */
const MAX_ARTIFACTS = 20;
/** A string in an event's data is cut here: details are one link away, a receiver's body limit is not. */
const MAX_TEXT = 2000;

const cut = (s: string | null | undefined): string | null =>
  s == null ? null : s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;

type Db = Prisma.TransactionClient;

/** The console's page of a run, from the gateway's public API base (`…/v1` → `…/console/runs/<id>`). */
export const sessionLinkOf = (publicApiBaseUrl: string, runId: string): string =>
  `${publicApiBaseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/console/runs/${encodeURIComponent(runId)}`;

/** Short scalars of an artifact's data (URL, title, branch…); nested objects and long values stay on the run's page. */
function summary(data: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (!data || typeof data !== 'object') return out;
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (typeof value === 'string') out[key] = cut(value)!;
    else if (typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  return out;
}

/**
 * The Standard Webhooks bodies `{type, timestamp, data}` of events, by event ID. `state`/`previous_state` come from the event
 * (what the run entered then), title and artifacts from the run as it is when the body is first built; the body is
 * then stored and every later attempt sends the same bytes.
 */
export async function buildEventBodies(
  db: Db,
  events: OutboundEvent[],
  publicApiBaseUrl: string,
): Promise<Map<string, string>> {
  const runIds = [...new Set(events.map((e) => e.runId))];
  // Two reads for the whole batch: the runs, and their first artifacts (at most MAX_ARTIFACTS each, cut below).
  const [runs, allArtifacts] = await Promise.all([
    db.run.findMany({
      where: { id: { in: runIds } },
      select: { id: true, title: true, state: true, statusMessage: true, errorCode: true },
    }),
    db.artifact.findMany({
      where: { runId: { in: runIds } },
      orderBy: { createdAt: 'asc' },
      select: { id: true, runId: true, type: true, data: true, createdAt: true },
    }),
  ]);
  const runById = new Map(runs.map((r) => [r.id, r]));
  const artifactsByRun = new Map<string, typeof allArtifacts>();
  for (const a of allArtifacts) {
    const list = artifactsByRun.get(a.runId) ?? [];
    if (list.length < MAX_ARTIFACTS) list.push(a);
    artifactsByRun.set(a.runId, list);
  }
  const bodies = new Map<string, string>();
  for (const event of events) {
    const stored = (event.data ?? {}) as Record<string, unknown>;
    const run = runById.get(event.runId);
    const artifacts = artifactsByRun.get(event.runId) ?? [];
    const isState = event.type !== 'run.artifact_reported';
    const data = {
      run_id: event.runId,
      state: isState ? stored.to : (run?.state ?? null),
      previous_state: isState ? (stored.from ?? null) : null,
      title: cut(run?.title) ?? '',
      session_link: sessionLinkOf(publicApiBaseUrl, event.runId),
      status_message: isState ? cut((stored.message as string | undefined) ?? null) : cut(run?.statusMessage),
      ...(isState && stored.error_code ? { error_code: stored.error_code } : {}),
      ...(isState ? {} : { artifact: { artifact_type: stored.artifact_type, data: summary(stored.data) } }),
      artifacts: artifacts.map((a) => ({
        artifact_uid: a.id,
        artifact_type: a.type,
        created_at: a.createdAt.toISOString(),
        data: summary(a.data),
      })),
    };
    bodies.set(
      event.id,
      JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data }),
    );
  }
  return bodies;
}
