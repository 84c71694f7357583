import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { reachableBy } from './environment-access';
import type { ScannedSkill } from './git-skill-scanner';
import type { RepositoryRef } from '../egress/repository-url';
import { skillDirectoryName } from './skill-file';
import type { SkillRepositoryCache } from './skill-repository-cache';

/** One SKILL.md as the API shows it (contract §1.1 Variant), plus what run creation needs. */
export interface SkillVariant {
  id: string;
  name: string;
  base_prompt: string;
  description: string;
  environments: Array<{ uid: string; name: string }>;
  source: { owner: string; name: string; skill_path: string };
  error?: string;
  last_run_timestamp?: string | null;
}

export interface ListSkillsOptions {
  repo?: string;
  refresh?: boolean;
  sortBy?: string;
  includeMalformed?: boolean;
}

interface RepoInScope extends RepositoryRef {
  environments: Array<{ uid: string; name: string }>;
}

const OWNER_REPO = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/;

/**
 * Skills are the SKILL.md files of the git repositories of the environments the caller can reach. Listing groups
 * them by name (contract §1.1); run creation resolves a spec to one of them (docs/catalog.md).
 */
export class SkillCatalog {
  constructor(
    private readonly db: PrismaClient,
    private readonly cache: SkillRepositoryCache,
  ) {}

  private async repositories(caller: Caller, environmentId?: string): Promise<RepoInScope[]> {
    const envs = await this.db.environment.findMany({
      where: { AND: [reachableBy(caller), ...(environmentId ? [{ id: environmentId }] : [])] },
      select: { id: true, name: true, repositories: true },
      orderBy: { id: 'asc' },
    });
    const byUrl = new Map<string, RepoInScope>();
    for (const env of envs) {
      for (const repo of (env.repositories ?? []) as unknown as RepositoryRef[]) {
        const entry = byUrl.get(repo.url) ?? { ...repo, environments: [] };
        entry.environments.push({ uid: env.id, name: env.name });
        byUrl.set(repo.url, entry);
      }
    }
    return [...byUrl.values()];
  }

  /** Every variant (malformed ones included) of the repositories in scope, merged by spec. */
  async variants(
    caller: Caller,
    options: { repo?: string; refresh?: boolean; environmentId?: string } = {},
  ): Promise<SkillVariant[]> {
    let repos = await this.repositories(caller, options.environmentId);
    if (options.repo) {
      const wanted = options.repo.toLowerCase();
      repos = repos.filter((r) => `${r.owner}/${r.repo}`.toLowerCase() === wanted);
    }
    if (options.refresh) await this.cache.clear(repos.map((r) => r.url));
    const scanned = await Promise.all(
      repos.map(async (r) => ({ repo: r, skills: await this.cache.skills(r.url, r.repo) })),
    );
    const byId = new Map<string, SkillVariant>();
    for (const { repo, skills } of scanned) {
      for (const skill of skills as ScannedSkill[]) {
        const id = `${repo.owner}/${repo.repo}:${skill.path}`;
        const existing = byId.get(id);
        if (existing) {
          for (const env of repo.environments)
            if (!existing.environments.some((e) => e.uid === env.uid)) existing.environments.push(env);
          continue;
        }
        byId.set(id, {
          id,
          name: skill.name,
          base_prompt: skill.instructions,
          description: skill.description,
          environments: [...repo.environments],
          source: { owner: repo.owner, name: repo.repo, skill_path: skill.path },
          ...(skill.error ? { error: skill.error } : {}),
        });
      }
    }
    return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** GET /agent: `{agents: [{name, variants}]}` sorted by name, or by the most recent run of any variant. */
  async list(
    caller: Caller,
    options: ListSkillsOptions,
  ): Promise<{ agents: Array<{ name: string; variants: SkillVariant[] }> }> {
    if (options.repo && !OWNER_REPO.test(options.repo))
      throw new AppError('invalid_request', 'repo must have the form owner/repo');
    const sortBy = options.sortBy || 'name';
    if (sortBy !== 'name' && sortBy !== 'last_run')
      throw new AppError('invalid_request', 'sort_by must be name or last_run');
    const variants = (await this.variants(caller, options)).filter(
      (v) => options.includeMalformed || !v.error,
    );
    const lastRuns = variants.length
      ? await this.db.run.groupBy({
          by: ['skillSpec'],
          where: { teamId: caller.team_id, skillSpec: { in: variants.map((v) => v.id) } },
          _max: { createdAt: true },
        })
      : [];
    const lastRun = new Map(lastRuns.map((r) => [r.skillSpec!, r._max.createdAt]));
    const groups = new Map<string, SkillVariant[]>();
    for (const v of variants) {
      v.last_run_timestamp = lastRun.get(v.id)?.toISOString() ?? null;
      groups.set(v.name, [...(groups.get(v.name) ?? []), v]);
    }
    const agents = [...groups.entries()].map(([name, vs]) => ({
      name,
      variants: vs.map(({ name: _name, ...variant }) => variant) as SkillVariant[],
      latest: vs.reduce(
        (max, v) => (v.last_run_timestamp && v.last_run_timestamp > max ? v.last_run_timestamp : max),
        '',
      ),
    }));
    agents.sort((a, b) =>
      sortBy === 'last_run' && a.latest !== b.latest
        ? a.latest < b.latest
          ? 1
          : -1
        : a.name.localeCompare(b.name),
    );
    return { agents: agents.map(({ latest: _latest, ...agent }) => agent) };
  }

  /**
   * A run's skill spec (`repo:name`, `repo:path`, `org/repo:name`, `org/repo:path`) → the one variant it names, in
   * the run's environment when it has one. Undefined when nothing matches; a malformed or ambiguous match is a 400.
   */
  async resolve(caller: Caller, spec: string, environmentId?: string): Promise<SkillVariant | undefined> {
    const colon = spec.indexOf(':');
    const repoPart = colon > 0 ? spec.slice(0, colon).toLowerCase() : '';
    const skillPart = (colon > 0 ? spec.slice(colon + 1) : spec).replace(/^\/+|\/+$/g, '');
    if (!skillPart) throw new AppError('invalid_request', `skill "${spec}" names no skill`);
    const candidates = (await this.variants(caller, { environmentId })).filter((v) => {
      const repoMatches =
        !repoPart ||
        (repoPart.includes('/')
          ? `${v.source.owner}/${v.source.name}`.toLowerCase() === repoPart
          : v.source.name.toLowerCase() === repoPart);
      const path = v.source.skill_path;
      const pathMatches =
        path === skillPart ||
        path === `${skillPart}/SKILL.md` ||
        v.name === skillPart ||
        skillDirectoryName(path, v.source.name) === skillPart;
      return repoMatches && pathMatches;
    });
    const exact = candidates.filter((v) => v.source.skill_path === skillPart);
    const chosen = exact.length === 1 ? exact : candidates;
    if (chosen.length === 0) return undefined;
    if (chosen.length > 1)
      throw new AppError(
        'invalid_request',
        `skill "${spec}" is ambiguous: ${chosen.map((v) => v.id).join(', ')}`,
      );
    const variant = chosen[0]!;
    if (variant.error)
      throw new AppError('invalid_request', `skill ${variant.id} is malformed: ${variant.error}`);
    return variant;
  }
}
