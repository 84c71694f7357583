import { AppError } from '@conveyor/errors';
import { createPrismaClient, newUuid, type Prisma, type PrismaClient } from '@conveyor/db';
import { listRunsRequest, type Caller__Output, type ListRunsRequest__Output } from '@conveyor/proto';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { listRuns } from './list-runs';
import { pageQuery } from './run-list-sql';
import type { RunPage } from './run-view';

// ListRuns over a real PostgreSQL: every filter, every sort in both directions, keyset pagination while runs
// are being created, and each rejection. Rows are inserted directly (run creation is tested elsewhere).

jest.setTimeout(30_000);

let database: TestDatabase;
let db: PrismaClient;
let seq = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const BASE = Date.parse('2026-01-01T00:00:00.000Z');

async function newTeam(opts: { metadataFilteringEnabled?: boolean } = {}): Promise<Caller__Output> {
  const id = `team_${newUuid().slice(0, 8)}`;
  await db.team.create({ data: { id, name: id, ...opts } });
  return {
    team_id: id,
    principal_type: 'USER',
    principal_id: 'user_1',
    role: 'ADMIN',
    api_key_id: '',
    run_id: '',
    display_name: '',
    email: '',
  };
}

function runData(caller: Caller__Output, data: Partial<Prisma.RunUncheckedCreateInput> = {}) {
  seq += 1;
  const at = new Date(BASE + seq * 1000);
  return {
    id: newUuid(),
    teamId: caller.team_id,
    title: `run ${seq}`,
    prompt: `prompt ${seq}`,
    creatorId: 'user_1',
    executorId: 'user_1',
    conversationId: newUuid(),
    sessionId: newUuid(),
    createdAt: at,
    updatedAt: at,
    ...data,
  };
}

async function insertRun(caller: Caller__Output, data: Partial<Prisma.RunUncheckedCreateInput> = {}) {
  return db.run.create({ data: runData(caller, data) });
}

/** Many runs in one statement, in creation order. */
async function insertRuns(caller: Caller__Output, count: number) {
  const rows = Array.from({ length: count }, () => runData(caller));
  await db.run.createMany({ data: rows });
  return rows;
}

const request = (overrides: Partial<ListRunsRequest__Output> = {}): ListRunsRequest__Output =>
  listRunsRequest(overrides);

const list = (caller: Caller__Output, overrides: Partial<ListRunsRequest__Output> = {}) =>
  listRuns(db, caller, request(overrides));
const ids = (res: RunPage): string[] => res.runs.map((r) => r.run.id);
type RunRow = Awaited<ReturnType<typeof insertRun>>;

/** Follows next_cursor to the end, as the SDK does, re-sending the same query. */
async function listAll(
  caller: Caller__Output,
  overrides: Partial<ListRunsRequest__Output>,
  between?: () => Promise<unknown>,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor = '';
  for (let page = 0; page < 1000; page++) {
    const res = await list(caller, { ...overrides, cursor });
    seen.push(...ids(res));
    if (res.nextCursor === undefined) return seen;
    expect(res.runs).toHaveLength(overrides.limit || 20);
    cursor = res.nextCursor;
    await between?.();
  }
  throw new Error('pagination did not end');
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe('ListRuns sorting and pagination', () => {
  it('defaults to updated_at desc, 20 per page, and pages through every run exactly once', async () => {
    const caller = await newTeam();
    const runs = await insertRuns(caller, 45);
    const first = await list(caller);
    expect(first.runs).toHaveLength(20);
    expect(first.nextCursor).toBeDefined();
    const expected = runs.map((r) => r.id).reverse(); // created 1 s apart, newest first
    expect(ids(first)).toEqual(expected.slice(0, 20));
    expect(await listAll(caller, {})).toEqual(expected);
    expect(await listAll(caller, { limit: 100 })).toEqual(expected);
  });

  it('stays stable while runs are created between pages, in both directions', async () => {
    const caller = await newTeam();
    const existing = await insertRuns(caller, 12);
    const created: string[] = [];
    const createOne = async () => created.push((await insertRun(caller)).id);

    const desc = await listAll(caller, { limit: 5 }, createOne);
    expect(desc).toEqual(existing.map((r) => r.id).reverse());

    // Ascending, runs created meanwhile come after the cursor, so they show up at the end, once each.
    const before = [...existing.map((r) => r.id), ...created];
    created.length = 0;
    const asc = await listAll(caller, { limit: 5, sort_by: 'created_at', sort_order: 'asc' }, createOne);
    expect(asc.slice(0, before.length)).toEqual(before);
    expect(asc.slice(before.length)).toEqual(created.slice(0, asc.length - before.length));
    expect(new Set(asc).size).toBe(asc.length);
  });

  it('breaks ties on equal timestamps by ID without skipping or repeating', async () => {
    const caller = await newTeam();
    const at = new Date('2026-03-03T03:03:03.333Z');
    const runs = [];
    for (let i = 0; i < 7; i++) runs.push(await insertRun(caller, { createdAt: at, updatedAt: at }));
    const sorted = runs.map((r) => r.id).sort();
    expect(await listAll(caller, { limit: 2, sort_by: 'created_at', sort_order: 'asc' })).toEqual(sorted);
    expect(await listAll(caller, { limit: 3 })).toEqual([...sorted].reverse());
  });

  it('sorts by title in both directions', async () => {
    const caller = await newTeam();
    const titles = ['delta', 'alpha', 'charlie', 'bravo', 'alpha', 'echo'];
    const runs = [];
    for (const title of titles) runs.push(await insertRun(caller, { title }));
    const byTitle = [...runs]
      .sort((a, b) => (a.title === b.title ? (a.id < b.id ? -1 : 1) : a.title < b.title ? -1 : 1))
      .map((r) => r.id);
    expect(await listAll(caller, { limit: 2, sort_by: 'title', sort_order: 'asc' })).toEqual(byTitle);
    expect(await listAll(caller, { limit: 4, sort_by: 'title', sort_order: 'desc' })).toEqual(
      [...byTitle].reverse(),
    );
  });

  it('sorts by agent (skill spec) alphabetically with runs without a skill last, in both directions', async () => {
    const caller = await newTeam();
    const specs = [
      'acme/b:SKILL.md',
      null,
      'acme/a:SKILL.md',
      null,
      'acme/c:SKILL.md',
      'acme/a:SKILL.md',
      null,
    ];
    const runs: RunRow[] = [];
    for (const skillSpec of specs) runs.push(await insertRun(caller, { skillSpec }));
    const withSkill = runs.filter((r) => r.skillSpec !== null);
    const without = runs.filter((r) => r.skillSpec === null);
    const cmp = (a: RunRow, b: RunRow) =>
      a.skillSpec === b.skillSpec
        ? a.id < b.id
          ? -1
          : 1
        : (a.skillSpec ?? '') < (b.skillSpec ?? '')
          ? -1
          : 1;
    const asc = [...withSkill.sort(cmp).map((r) => r.id), ...without.map((r) => r.id).sort()];
    const desc = [
      ...[...withSkill]
        .sort(cmp)
        .reverse()
        .map((r) => r.id),
      ...without
        .map((r) => r.id)
        .sort()
        .reverse(),
    ];
    for (const limit of [1, 2, 3, 4, 100]) {
      expect(await listAll(caller, { limit, sort_by: 'agent', sort_order: 'asc' })).toEqual(asc);
      expect(await listAll(caller, { limit, sort_by: 'agent', sort_order: 'desc' })).toEqual(desc);
    }
    // Only runs without a skill, and only runs with one.
    expect(await listAll(caller, { limit: 2, sort_by: 'agent', skill_spec: 'acme/a:SKILL.md' })).toHaveLength(
      2,
    );
    const none = await newTeam();
    const bare = [await insertRun(none), await insertRun(none), await insertRun(none)];
    expect(await listAll(none, { limit: 2, sort_by: 'agent' })).toEqual(
      bare
        .map((r) => r.id)
        .sort()
        .reverse(),
    );
  });

  it('never shows another team its runs', async () => {
    const mine = await newTeam();
    const theirs = await newTeam();
    const run = await insertRun(mine, { title: 'shared title', modelId: 'm' });
    await insertRun(theirs, { title: 'shared title', modelId: 'm' });
    expect(ids(await list(mine, { q: 'shared title', model_id: 'm' }))).toEqual([run.id]);
  });
});

describe("ListRuns time filters under the other timestamp's sort", () => {
  // The page query bounds each time filter through the team's shortest and longest run lifetimes
  // (run-list-sql.ts, lifetimeBounds): runs updated long after creation, or (clock skew) just before it, must
  // still be found, in every direction and across pages.
  it('matches a plain filter-and-sort over runs of every lifetime', async () => {
    const caller = await newTeam();
    const hour = 3600_000;
    const lifetimes = [0, 5 * 1000, -3, 40 * 24 * hour, 2 * hour, 0, 365 * 24 * hour, 1, 12 * hour, 0];
    const rows = await Promise.all(
      lifetimes.map((lifetime, i) => {
        const createdAt = new Date(BASE + i * hour);
        return insertRun(caller, { createdAt, updatedAt: new Date(createdAt.getTime() + lifetime) });
      }),
    );
    const at = new Date(BASE + 4.5 * hour).toISOString();
    const cases: [Partial<ListRunsRequest__Output>, (r: RunRow) => boolean][] = [
      [{ created_before: at }, (r) => r.createdAt.toISOString() < at],
      [{ created_after: at }, (r) => r.createdAt.toISOString() > at],
      [{ updated_after: at }, (r) => r.updatedAt.toISOString() > at],
    ];
    for (const [filter, keep] of cases)
      for (const sortBy of ['updated_at', 'created_at'] as const)
        for (const sortOrder of ['asc', 'desc'] as const) {
          const key = (r: RunRow) => (sortBy === 'updated_at' ? r.updatedAt : r.createdAt).getTime();
          const expected = rows
            .filter(keep)
            .sort((a, b) => (key(a) - key(b) || a.id.localeCompare(b.id)) * (sortOrder === 'asc' ? 1 : -1))
            .map((r) => r.id);
          const listed = await listAll(caller, {
            ...filter,
            sort_by: sortBy,
            sort_order: sortOrder,
            limit: 2,
          });
          expect({ filter, sortBy, sortOrder, ids: listed }).toEqual({
            filter,
            sortBy,
            sortOrder,
            ids: expected,
          });
        }
  });
});

describe('ListRuns filters', () => {
  let caller: Caller__Output;
  const runs: Record<string, string> = {};

  beforeAll(async () => {
    caller = await newTeam();
    const add = async (name: string, data: Partial<Prisma.RunUncheckedCreateInput>) => {
      runs[name] = (await insertRun(caller, data)).id;
    };
    await add('queued', {
      state: 'QUEUED',
      configName: 'nightly',
      modelId: 'gpt-5',
      title: 'Nightly dependency bump',
    });
    await add('running', {
      state: 'INPROGRESS',
      configName: 'nightly',
      modelId: 'claude-4',
      creatorId: 'user_2',
      executorId: 'agent_7',
      executorType: 'AGENT',
    });
    await add('done', {
      state: 'SUCCEEDED',
      source: 'SCHEDULED_AGENT',
      scheduleId: 'sched_1',
      environmentId: 'AbCdEfGhIjKlMnOpQrStUv',
      skillSpec: 'acme/api:.claude/skills/deploy/SKILL.md',
      prompt: 'Deploy the payments service to staging',
      metadata: { ticket_id: 'VIS-238', team: 'payments', automation_id: 'auto_1' },
    });
    await add('failed', {
      state: 'FAILED',
      source: 'LINEAR',
      executionLocation: 'LOCAL',
      metadata: { ticket_id: 'VIS-239', team: 'payments' },
      title: 'Refactor 100% of the _legacy_ code',
    });
    const parent = runs.done!;
    await add('child', {
      state: 'CANCELLED',
      source: 'ORCHESTRATION',
      parentRunId: parent,
      ancestorIds: [parent],
      metadata: { automation_id: 'auto_2' },
    });
    await add('grandchild', {
      state: 'BLOCKED',
      parentRunId: runs.child!,
      ancestorIds: [runs.child!, parent],
    });
    await db.artifact.create({
      data: {
        id: newUuid(),
        runId: runs.done!,
        type: 'PULL_REQUEST',
        data: { url: 'https://github.com/acme/api/pull/1', branch: 'b' },
      },
    });
    await db.artifact.create({
      data: { id: newUuid(), runId: runs.failed!, type: 'PLAN', data: { document_uid: 'd' } },
    });
    await db.artifact.create({
      data: { id: newUuid(), runId: runs.failed!, type: 'PLAN', data: { document_uid: 'e' } },
    });
  });

  const names = async (overrides: Partial<ListRunsRequest__Output>) => {
    const res = await list(caller, { limit: 100, ...overrides });
    const byId = Object.fromEntries(Object.entries(runs).map(([k, v]) => [v, k]));
    return ids(res)
      .map((id) => byId[id] ?? id)
      .sort();
  };

  it('state (any of several), name, model, creator, executor', async () => {
    expect(await names({ states: ['QUEUED'] })).toEqual(['queued']);
    expect(await names({ states: ['QUEUED', 'FAILED', 'QUEUED'] })).toEqual(['failed', 'queued']);
    expect(await names({ name: 'nightly' })).toEqual(['queued', 'running']);
    expect(await names({ model_id: 'claude-4' })).toEqual(['running']);
    expect(await names({ creator: 'user_2' })).toEqual(['running']);
    expect(await names({ executor: 'agent_7' })).toEqual(['running']);
    expect(await names({ name: 'nightly', model_id: 'gpt-5' })).toEqual(['queued']);
  });

  it('source, execution location, schedule, skill spec and environment (including empty-environment)', async () => {
    expect(await names({ source: 'LINEAR' })).toEqual(['failed']);
    expect(await names({ execution_location: 'LOCAL' })).toEqual(['failed']);
    expect(await names({ execution_location: 'REMOTE' })).toHaveLength(5);
    expect(await names({ schedule_id: 'sched_1' })).toEqual(['done']);
    expect(await names({ skill_spec: 'acme/api:.claude/skills/deploy/SKILL.md' })).toEqual(['done']);
    expect(await names({ environment_id: 'AbCdEfGhIjKlMnOpQrStUv' })).toEqual(['done']);
    expect(await names({ environment_id: 'empty-environment' })).toEqual([
      'child',
      'failed',
      'grandchild',
      'queued',
      'running',
    ]);
    expect(await names({ environment_id: 'ZZZZZZZZZZZZZZZZZZZZZZ' })).toEqual([]);
  });

  it('created_after, created_before and updated_after, with fractional seconds and offsets', async () => {
    const all = await db.run.findMany({ where: { teamId: caller.team_id }, orderBy: { createdAt: 'asc' } });
    const second = all[1]!.createdAt;
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await names({ created_after: iso(second.getTime()) })).toHaveLength(4); // strictly after
    expect(await names({ created_after: iso(second.getTime() - 1) })).toHaveLength(5);
    expect(await names({ created_before: iso(second.getTime()) })).toEqual(['queued']);
    expect(
      await names({
        created_after: iso(all[0]!.createdAt.getTime()),
        created_before: iso(all[2]!.createdAt.getTime()),
      }),
    ).toEqual(['running']);
    // Microseconds are honoured, not rounded to milliseconds.
    expect(await names({ created_before: `${iso(second.getTime()).slice(0, -1)}001Z` })).toEqual([
      'queued',
      'running',
    ]);
    // The same instant written with an offset.
    const local = new Date(second.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(await names({ created_before: local })).toEqual(['queued']);
    await db.run.update({
      where: { id: runs.queued! },
      data: { updatedAt: new Date('2030-01-01T00:00:00Z') },
    });
    expect(await names({ updated_after: '2029-12-31T23:59:59.999Z' })).toEqual(['queued']);
  });

  it('ancestor_run_id: every descendant, not the ancestor itself', async () => {
    expect(await names({ ancestor_run_id: runs.done! })).toEqual(['child', 'grandchild']);
    expect(await names({ ancestor_run_id: runs.child! })).toEqual(['grandchild']);
    expect(await names({ ancestor_run_id: runs.queued! })).toEqual([]);
  });

  it('metadata pairs (AND), automation_id, artifact_type', async () => {
    expect(await names({ metadata: { team: 'payments' } })).toEqual(['done', 'failed']);
    expect(await names({ metadata: { team: 'payments', ticket_id: 'VIS-238' } })).toEqual(['done']);
    expect(await names({ metadata: { team: 'payments', ticket_id: 'nope' } })).toEqual([]);
    expect(await names({ automation_id: 'auto_1' })).toEqual(['done']);
    expect(await names({ automation_id: 'auto_2' })).toEqual(['child']);
    expect(await names({ automation_id: 'auto_1', metadata: { automation_id: 'auto_2' } })).toEqual([]);
    expect(await names({ artifact_type: 'PULL_REQUEST' })).toEqual(['done']);
    expect(await names({ artifact_type: 'PLAN' })).toEqual(['failed']);
    expect(await names({ artifact_type: 'SCREENSHOT' })).toEqual([]);
    // Both ways of matching artifact_type (see ArtifactStrategy) select the same runs in the same order.
    for (const type of ['PLAN', 'PULL_REQUEST', 'SCREENSHOT'] as const) {
      const args = {
        teamId: caller.team_id,
        filters: { artifactType: type },
        sortBy: 'title' as const,
        sortOrder: 'asc' as const,
        take: 10,
      };
      const viaExists = await db.$queryRaw<{ id: string }[]>(
        pageQuery({ ...args, artifactStrategy: 'exists' }),
      );
      const viaIds = await db.$queryRaw<{ id: string }[]>(pageQuery({ ...args, artifactStrategy: 'ids' }));
      expect(viaIds).toEqual(viaExists);
    }
    const listed = await list(caller, { artifact_type: 'PLAN' });
    expect(listed.runs[0]?.artifacts).toHaveLength(2);
  });

  it('q: every word, case-insensitively, anywhere in title, prompt or skill spec', async () => {
    expect(await names({ q: 'nightly DEPENDENCY' })).toEqual(['queued']);
    expect(await names({ q: 'bump nightly' })).toEqual(['queued']); // any order
    expect(await names({ q: 'payments service' })).toEqual(['done']);
    expect(await names({ q: 'staging skills/deploy' })).toEqual(['done']); // prompt + skill spec
    expect(await names({ q: 'skills/deploy' })).toEqual(['done']);
    expect(await names({ q: 'pay' })).toEqual(['done']); // partial words
    expect(await names({ q: 'nightly staging' })).toEqual([]); // words of different runs
    expect(await names({ q: '100%' })).toEqual(['failed']); // % and _ are literal
    expect(await names({ q: '_legacy_' })).toEqual(['failed']);
    expect(await names({ q: '0%_' })).toEqual([]);
    expect(await names({ q: 'zzzzqqqq' })).toEqual([]);
  });

  it('factory_uid matches nothing (no factory is accessible)', async () => {
    expect(await names({ factory_uid: 'factory_1' })).toEqual([]);
  });

  it('combines filters with pagination', async () => {
    const pages = await listAll(caller, {
      limit: 1,
      metadata: { team: 'payments' },
      sort_by: 'title',
      sort_order: 'asc',
    });
    expect(pages).toHaveLength(2);
  });
});

describe('ListRuns rejections', () => {
  let caller: Caller__Output;
  beforeAll(async () => {
    caller = await newTeam();
  });

  // Every other 400 is the gateway's (services/gateway/src/schemas/run-list-query.test.ts): only the
  // orchestrator can decode a cursor.
  it('400 invalid_request for a malformed cursor', async () => {
    const err = await rejection(list(caller, { cursor: 'garbage' }));
    expect(err.code).toBe('invalid_request');
    expect(err.httpStatus).toBe(400);
    expect(err.message).toMatch(/cursor/);
  });

  it('400 for a cursor issued for another sort', async () => {
    for (let i = 0; i < 3; i++) await insertRun(caller);
    const first = await list(caller, { limit: 1 });
    const err = await rejection(list(caller, { limit: 1, cursor: first.nextCursor ?? '', sort_by: 'title' }));
    expect(err.code).toBe('invalid_request');
  });

  it('accepts five metadata pairs', async () => {
    await expect(
      list(caller, { metadata: { a: '1', b: '2', c: '3', d: '4', e: '5' } }),
    ).resolves.toMatchObject({ runs: [] });
  });

  it('403 feature_not_available for metadata filters when the team has metadata filtering off', async () => {
    const off = await newTeam({ metadataFilteringEnabled: false });
    const err = await rejection(list(off, { metadata: { ticket_id: 'x' } }));
    expect(err.code).toBe('feature_not_available');
    expect(err.httpStatus).toBe(403);
    // automation_id is its own filter, not a metadata filter.
    await expect(list(off, { automation_id: 'auto_1' })).resolves.toMatchObject({ runs: [] });
  });

  it('404 resource_not_found, identical, for a missing, malformed or other team ancestor', async () => {
    const other = await newTeam();
    const foreign = await insertRun(other);
    const errors = await Promise.all(
      [newUuid(), 'not-a-uuid', foreign.id].map((id) => rejection(list(caller, { ancestor_run_id: id }))),
    );
    for (const err of errors) {
      expect(err.code).toBe('resource_not_found');
      expect(err.httpStatus).toBe(404);
      expect(err.message).toBe(errors[0]!.message);
    }
  });
});
