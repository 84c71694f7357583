import { Prisma } from '@conveyor/db';
import type { RunSortField, SortOrder } from '@conveyor/run-events';
import type { RunCursor } from './run-cursor';
import type { RunListFilters } from './run-list-filters';

/**
 * The page query of ListRuns as parameterised SQL. Raw SQL (through Prisma.sql, so every user value is a bound
 * parameter) because several filters have no Prisma equivalent that PostgreSQL can serve from an index:
 * JSONB containment (`@>`, jsonb_path_ops GIN) for metadata, array containment for ancestors (GIN), trigram
 * ILIKE for `q` (gin_trgm_ops) and row-value keyset comparisons. Identifiers come only from
 * the constant tables below. Rows are then loaded through Prisma's query API by ID.
 */

const SORT_COLUMN: Record<RunSortField, Prisma.Sql> = {
  updated_at: Prisma.raw('r."updatedAt"'),
  created_at: Prisma.raw('r."createdAt"'),
  title: Prisma.raw('r."title"'),
  agent: Prisma.raw('r."skillSpec"'),
};

/** The part of the agent sort a query covers: runs with a skill (alphabetical), then runs without (by ID). */
export type AgentSection = 'skill' | 'none';

const EQUALS: [keyof RunListFilters, Prisma.Sql][] = [
  ['configName', Prisma.raw('r."configName"')],
  ['modelId', Prisma.raw('r."modelId"')],
  ['creatorId', Prisma.raw('r."creatorId"')],
  ['executorId', Prisma.raw('r."executorId"')],
  ['source', Prisma.raw('r."source"')],
  ['executionLocation', Prisma.raw('r."executionLocation"')],
  ['skillSpec', Prisma.raw('r."skillSpec"')],
  ['scheduleId', Prisma.raw('r."scheduleId"')],
];

/**
 * How `artifact_type` is matched. `exists`: walk the runs in sort order and probe Artifact(type, runId) for each,
 * good when the type is common. `ids`: collect the runs having that type first (Artifact(type, runId)) and
 * look them up by primary key, good when it is rare, where walking would probe thousands of runs per match.
 * ListRuns picks by counting up to RARE_ARTIFACT_LIMIT artifacts of the type (see `artifactProbe`).
 */
export type ArtifactStrategy = 'exists' | 'ids';
export const RARE_ARTIFACT_LIMIT = 2000;

/** `n` = artifacts of the type, counted up to RARE_ARTIFACT_LIMIT + 1 (an index-only range scan). */
export const artifactProbe = (type: string): Prisma.Sql =>
  Prisma.sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM "Artifact" WHERE "type" = ${type} LIMIT ${RARE_ARTIFACT_LIMIT + 1}) s`;

/** `%`, `_` and the escape character itself match literally in the user's search text. */
export const likePattern = (q: string): string => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function filterConditions(
  teamId: string,
  filters: RunListFilters,
  artifactStrategy: ArtifactStrategy = 'exists',
): Prisma.Sql[] {
  const where: Prisma.Sql[] = [Prisma.sql`r."teamId" = ${teamId}`];
  if (filters.factoryUid !== undefined) where.push(Prisma.sql`FALSE`); // no factory is accessible (yet)
  // One state as `=`: PostgreSQL reads (teamId, state, updatedAt, id) in order only for an equality, not for ANY.
  if (filters.states?.length === 1)
    where.push(Prisma.sql`r."state" = CAST(${filters.states[0]} AS "RunState")`);
  else if (filters.states) where.push(Prisma.sql`r."state" = ANY(CAST(${filters.states} AS "RunState"[]))`);
  for (const [key, column] of EQUALS) {
    const value = filters[key];
    if (typeof value === 'string') where.push(Prisma.sql`${column} = ${value}`);
  }
  if (filters.createdAfter)
    where.push(Prisma.sql`r."createdAt" > CAST(${filters.createdAfter} AS timestamptz)`);
  if (filters.createdBefore)
    where.push(Prisma.sql`r."createdAt" < CAST(${filters.createdBefore} AS timestamptz)`);
  if (filters.updatedAfter)
    where.push(Prisma.sql`r."updatedAt" > CAST(${filters.updatedAfter} AS timestamptz)`);
  if (filters.environmentId === null) where.push(Prisma.sql`r."environmentId" IS NULL`);
  else if (filters.environmentId !== undefined)
    where.push(Prisma.sql`r."environmentId" = ${filters.environmentId}`);
  if (filters.ancestorRunId)
    where.push(Prisma.sql`r."ancestorIds" @> ARRAY[${filters.ancestorRunId}]::text[]`);
  if (filters.metadata)
    where.push(Prisma.sql`r."metadata" @> CAST(${JSON.stringify(filters.metadata)} AS jsonb)`);
  // Separate containment: automation_id=x with metadata[automation_id]=y must match nothing, not override.
  if (filters.automationId !== undefined)
    where.push(
      Prisma.sql`r."metadata" @> CAST(${JSON.stringify({ automation_id: filters.automationId })} AS jsonb)`,
    );
  if (filters.artifactType && artifactStrategy === 'ids') {
    where.push(
      Prisma.sql`r."id" = ANY (ARRAY(SELECT a."runId" FROM "Artifact" a WHERE a."type" = ${filters.artifactType}))`,
    );
  } else if (filters.artifactType) {
    where.push(
      Prisma.sql`EXISTS (SELECT 1 FROM "Artifact" a WHERE a."runId" = r."id" AND a."type" = ${filters.artifactType})`,
    );
  }
  // Every word must appear, case-insensitively, in the title, prompt or skill spec (trigram GIN indexes).
  for (const term of filters.q ?? []) {
    const pattern = likePattern(term);
    where.push(
      Prisma.sql`(r."title" ILIKE ${pattern} OR r."prompt" ILIKE ${pattern} OR r."skillSpec" ILIKE ${pattern})`,
    );
  }
  return where;
}

/** The shortest or longest lifetime ("updatedAt" - "createdAt") of the team's runs: one Run_teamId_lifetime_idx descent. */
const lifetime = (teamId: string, aggregate: 'min' | 'max'): Prisma.Sql =>
  Prisma.sql`(SELECT ${Prisma.raw(aggregate)}(x."updatedAt" - x."createdAt") FROM "Run" x WHERE x."teamId" = ${teamId})`;

/**
 * A time filter on one column bounds the other through the team's run lifetimes: createdAt < X implies
 * updatedAt < X + max, createdAt > X implies updatedAt > X + min, updatedAt > X implies createdAt > X - max.
 * The bound changes no result, but it turns the filter into a range of the sort's index: without it,
 * `created_before` under the updated_at sort walks every run created since X before the first match.
 */
function lifetimeBounds(teamId: string, filters: RunListFilters, sortBy: RunSortField): Prisma.Sql[] {
  const bounds: Prisma.Sql[] = [];
  if (sortBy === 'updated_at' && filters.createdBefore)
    bounds.push(
      Prisma.sql`r."updatedAt" < CAST(${filters.createdBefore} AS timestamptz) + ${lifetime(teamId, 'max')}`,
    );
  if (sortBy === 'updated_at' && filters.createdAfter)
    bounds.push(
      Prisma.sql`r."updatedAt" > CAST(${filters.createdAfter} AS timestamptz) + ${lifetime(teamId, 'min')}`,
    );
  if (sortBy === 'created_at' && filters.updatedAfter)
    bounds.push(
      Prisma.sql`r."createdAt" > CAST(${filters.updatedAfter} AS timestamptz) - ${lifetime(teamId, 'max')}`,
    );
  return bounds;
}

function castValue(sortBy: RunSortField, value: string): Prisma.Sql {
  return sortBy === 'updated_at' || sortBy === 'created_at'
    ? Prisma.sql`CAST(${value} AS timestamptz)`
    : Prisma.sql`${value}`;
}

/**
 * One page of IDs in sort order, limit + 1 rows (the extra row says whether there is a next page).
 * For the agent sort, `section` picks runs with a skill or without; the caller runs the second section when
 * the first does not fill the page. Each query is an index range scan in one direction.
 */
export function pageQuery(args: {
  teamId: string;
  filters: RunListFilters;
  sortBy: RunSortField;
  sortOrder: SortOrder;
  cursor?: RunCursor;
  take: number;
  section?: AgentSection;
  artifactStrategy?: ArtifactStrategy;
}): Prisma.Sql {
  const { sortBy, sortOrder, cursor, take } = args;
  const where = [
    ...filterConditions(args.teamId, args.filters, args.artifactStrategy),
    ...lifetimeBounds(args.teamId, args.filters, sortBy),
  ];
  const cmp = Prisma.raw(sortOrder === 'desc' ? '<' : '>');
  const dir = Prisma.raw(sortOrder === 'desc' ? 'DESC' : 'ASC');
  let orderBy: Prisma.Sql;
  if (sortBy === 'agent' && args.section === 'none') {
    where.push(Prisma.sql`r."skillSpec" IS NULL`);
    // A cursor in the skill section means this section starts from its beginning.
    if (cursor && cursor.value === null) where.push(Prisma.sql`r."id" ${cmp} CAST(${cursor.id} AS uuid)`);
    orderBy = Prisma.sql`r."id" ${dir}`;
  } else {
    const column = SORT_COLUMN[sortBy];
    if (sortBy === 'agent') where.push(Prisma.sql`r."skillSpec" IS NOT NULL`);
    if (cursor && cursor.value !== null) {
      where.push(
        Prisma.sql`(${column}, r."id") ${cmp} (${castValue(sortBy, cursor.value)}, CAST(${cursor.id} AS uuid))`,
      );
    }
    orderBy = Prisma.sql`${column} ${dir}, r."id" ${dir}`;
  }
  return Prisma.sql`SELECT r."id" FROM "Run" r WHERE ${Prisma.join(where, ' AND ')} ORDER BY ${orderBy} LIMIT ${take}`;
}
