import { AppError, notFound } from '@conveyor/errors';
import type { Artifact, PrismaClient, Run } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { isUuid } from './run-access';
import { encodeRunCursor, type RunCursor } from './run-cursor';
import { parseRunListRequest, type RunListQuery, type RunListRequest } from './run-list-filters';
import { artifactProbe, pageQuery, RARE_ARTIFACT_LIMIT, type ArtifactStrategy } from './run-list-sql';
import { usageByRun } from './run-usage';
import { runView, type RunPage } from './run-view';

export {
  DEFAULT_RUN_LIST_LIMIT as DEFAULT_LIMIT,
  MAX_RUN_LIST_LIMIT as MAX_LIMIT,
} from '@conveyor/run-events';

/**
 * Keyset pagination on (sort value, id): a page boundary is a position in the index, not an offset, so pages
 * stay stable while runs are being created. Every filter is served by an index (see bench/ and docs/runs.md).
 */
export async function listRuns(db: PrismaClient, caller: Caller, request: RunListRequest): Promise<RunPage> {
  const query = parseRunListRequest(request);
  await checkReferences(db, caller, query);
  const ids = await pageIds(db, caller.team_id, query);

  const pageIdsOnly = ids.slice(0, query.limit);
  // The page's rows, artifacts and usage are independent reads, sent at once. Raw SQL on purpose: Prisma's
  // findMany with `include` spent a quarter of the orchestrator's time under list load turning 20 wide rows and their
  // artifacts into objects (bench/README.md); these columns map to the same types with no transformation.
  const [rows, artifacts, usage] = await Promise.all([
    db.$queryRaw<Run[]>`SELECT * FROM "Run" WHERE id = ANY(${pageIdsOnly}::uuid[])`,
    db.$queryRaw<Artifact[]>`
      SELECT * FROM "Artifact" WHERE "runId" = ANY(${pageIdsOnly}::uuid[]) ORDER BY "createdAt", id`,
    usageByRun(db, pageIdsOnly),
  ]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const artifactsOf = new Map<string, Artifact[]>();
  for (const artifact of artifacts) {
    const of = artifactsOf.get(artifact.runId);
    if (of) of.push(artifact);
    else artifactsOf.set(artifact.runId, [artifact]);
  }
  // A run deleted between the two queries simply drops out of the page.
  const page = pageIdsOnly.map((id) => byId.get(id)).filter((row) => row !== undefined);
  const last = page[page.length - 1];
  const hasNext = ids.length > query.limit && last !== undefined;
  return {
    runs: page.map((row) => runView(row, artifactsOf.get(row.id) ?? [], usage.get(row.id))),
    nextCursor: hasNext ? encodeRunCursor(cursorAfter(query, last)) : undefined,
  };
}

/** Rules that need the database: the ancestor must be visible to the caller, metadata filtering enabled for the team. */
async function checkReferences(db: PrismaClient, caller: Caller, query: RunListQuery): Promise<void> {
  const { ancestorRunId, metadata } = query.filters;
  if (ancestorRunId) {
    // Same answer for a malformed ID, a missing run and another team's run: existence never leaks.
    const ancestor = isUuid(ancestorRunId)
      ? await db.run.findFirst({ where: { id: ancestorRunId, teamId: caller.team_id }, select: { id: true } })
      : null;
    if (!ancestor) throw notFound('ancestor_run_id: Run');
  }
  if (metadata) {
    const team = await db.team.findUnique({
      where: { id: caller.team_id },
      select: { metadataFilteringEnabled: true },
    });
    if (!team?.metadataFilteringEnabled) {
      throw new AppError('feature_not_available', 'metadata filtering is not enabled for this team', {
        details: { parameter: 'metadata' },
      });
    }
  }
}

/** limit + 1 IDs in order; the agent sort reads runs with a skill first, then (if the page is not full) those without. */
async function pageIds(db: PrismaClient, teamId: string, query: RunListQuery): Promise<string[]> {
  const base = {
    teamId,
    filters: query.filters,
    sortBy: query.sortBy,
    sortOrder: query.sortOrder,
    cursor: query.cursor,
    artifactStrategy: await chooseArtifactStrategy(db, query),
  };
  const take = query.limit + 1;
  const run = async (sql: ReturnType<typeof pageQuery>) =>
    (await db.$queryRaw<{ id: string }[]>(sql)).map((r) => r.id);
  if (query.sortBy !== 'agent') return run(pageQuery({ ...base, take }));
  const ids = query.cursor?.value === null ? [] : await run(pageQuery({ ...base, take, section: 'skill' }));
  if (ids.length >= take) return ids;
  return ids.concat(await run(pageQuery({ ...base, take: take - ids.length, section: 'none' })));
}

function cursorAfter(
  query: RunListQuery,
  last: { id: string; updatedAt: Date; createdAt: Date; title: string; skillSpec: string | null },
): RunCursor {
  const value =
    query.sortBy === 'updated_at'
      ? last.updatedAt.toISOString()
      : query.sortBy === 'created_at'
        ? last.createdAt.toISOString()
        : query.sortBy === 'title'
          ? last.title
          : last.skillSpec;
  return { sortBy: query.sortBy, sortOrder: query.sortOrder, value, id: last.id };
}

/** See ArtifactStrategy: one cheap count decides between walking the runs and starting from the artifacts. */
export async function chooseArtifactStrategy(
  db: PrismaClient,
  query: RunListQuery,
): Promise<ArtifactStrategy> {
  if (!query.filters.artifactType) return 'exists';
  const [row] = await db.$queryRaw<{ n: number }[]>(artifactProbe(query.filters.artifactType));
  return (row?.n ?? 0) <= RARE_ARTIFACT_LIMIT ? 'ids' : 'exists';
}
