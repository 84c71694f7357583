import type { ArtifactType } from '@conveyor/run-events';
import { likePattern, pageQuery } from './run-list-sql';

describe('ListRuns SQL', () => {
  it('escapes LIKE wildcards in the search text', () => {
    expect(likePattern('100%_done\\x')).toBe('%100\\%\\_done\\\\x%');
  });

  it('binds every user value as a parameter', () => {
    const evil = `x'); DROP TABLE "Run"; --`;
    const sql = pageQuery({
      teamId: evil,
      filters: {
        configName: evil,
        q: [evil],
        metadata: { [evil]: evil },
        states: ['QUEUED'],
        environmentId: null,
        ancestorRunId: evil,
        // Typed, but the value is bound all the same should a caller ever bypass the types.
        artifactType: evil as ArtifactType,
      },
      sortBy: 'title',
      sortOrder: 'asc',
      cursor: { sortBy: 'title', sortOrder: 'asc', value: evil, id: '0b7d9c3e-5f6a-4b1c-8d2e-3f4a5b6c7d8e' },
      take: 21,
    });
    expect(sql.text).not.toContain('DROP');
    expect(sql.values).toContain(evil);
    expect(sql.values).toContain(21);
    expect(sql.text).toMatch(/ORDER BY r."title" ASC, r."id" ASC LIMIT \$\d+$/);
  });

  it('matches artifact_type from the runs (exists) or from the artifacts (ids)', () => {
    const args = {
      teamId: 't',
      filters: { artifactType: 'PLAN' as const },
      sortBy: 'updated_at' as const,
      sortOrder: 'desc' as const,
      take: 5,
    };
    expect(pageQuery(args).text).toContain(
      'EXISTS (SELECT 1 FROM "Artifact" a WHERE a."runId" = r."id" AND a."type" = $2)',
    );
    expect(pageQuery({ ...args, artifactStrategy: 'ids' }).text).toContain(
      'r."id" = ANY (ARRAY(SELECT a."runId" FROM "Artifact" a WHERE a."type" = $2))',
    );
  });

  it("bounds a time filter on one column by the team's run lifetimes only under the other column's sort", () => {
    const at = '2026-01-01T00:00:00Z';
    const args = { teamId: 't', take: 5, sortOrder: 'desc' as const };
    const text = (sortBy: 'updated_at' | 'created_at' | 'title', filters: object) =>
      pageQuery({ ...args, sortBy, filters }).text;
    expect(text('updated_at', { createdBefore: at })).toContain(
      'r."updatedAt" < CAST($3 AS timestamptz) + (SELECT max(x."updatedAt" - x."createdAt") FROM "Run" x WHERE x."teamId" = $4)',
    );
    expect(text('updated_at', { createdAfter: at })).toContain(
      'r."updatedAt" > CAST($3 AS timestamptz) + (SELECT min(',
    );
    expect(text('created_at', { updatedAfter: at })).toContain(
      'r."createdAt" > CAST($3 AS timestamptz) - (SELECT max(',
    );
    expect(text('created_at', { createdBefore: at, createdAfter: at })).not.toContain('x."updatedAt"');
    expect(text('title', { createdBefore: at, updatedAfter: at })).not.toContain('x."updatedAt"');
    expect(text('updated_at', { updatedAfter: at })).not.toContain('x."updatedAt"');
  });

  it('compares one state with = (so the state index is read in sort order) and several with ANY', () => {
    const args = { teamId: 't', sortBy: 'updated_at' as const, sortOrder: 'desc' as const, take: 5 };
    expect(pageQuery({ ...args, filters: { states: ['QUEUED'] } }).text).toContain(
      'r."state" = CAST($2 AS "RunState")',
    );
    expect(pageQuery({ ...args, filters: { states: ['QUEUED', 'FAILED'] } }).text).toContain(
      'r."state" = ANY(CAST($2 AS "RunState"[]))',
    );
  });

  it('reads the agent sort in two sections: with a skill (by spec), then without (by ID)', () => {
    const args = { teamId: 't', filters: {}, sortBy: 'agent' as const, sortOrder: 'desc' as const, take: 5 };
    const skill = pageQuery({ ...args, section: 'skill' });
    expect(skill.text).toContain('r."skillSpec" IS NOT NULL');
    expect(skill.text).toMatch(/ORDER BY r."skillSpec" DESC, r."id" DESC/);
    const none = pageQuery({
      ...args,
      section: 'none',
      cursor: { sortBy: 'agent', sortOrder: 'desc', value: null, id: '0b7d9c3e-5f6a-4b1c-8d2e-3f4a5b6c7d8e' },
    });
    expect(none.text).toContain('r."skillSpec" IS NULL');
    expect(none.text).toMatch(/r."id" < CAST\(\$\d+ AS uuid\)/);
    expect(none.text).toMatch(/ORDER BY r."id" DESC/);
    // A cursor still in the skill section does not restrict the section without a skill.
    const fresh = pageQuery({
      ...args,
      section: 'none',
      cursor: { sortBy: 'agent', sortOrder: 'desc', value: 'a', id: '0b7d9c3e-5f6a-4b1c-8d2e-3f4a5b6c7d8e' },
    });
    expect(fresh.text).not.toContain('CAST(');
  });
});
