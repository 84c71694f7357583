import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { CatalogConfig } from '../config';
import { EgressPolicy } from '../egress/egress-policy';
import { planGitFetch } from '../egress/git-egress';
import { EnvironmentGuests } from './environment-guests';
import { Environments } from './environments';
import { GitSkillScanner } from './git-skill-scanner';
import { ModelCatalog } from './model-catalog';
import { SkillCatalog } from './skill-catalog';
import { SkillRepositoryCache } from './skill-repository-cache';

export type CatalogModuleConfig = CatalogConfig;

/**
 * Environments, skills and models wired for the orchestrator: the services its gRPC handlers serve; its models and
 * skills are what createRun checks and defaults a run against (runs/resolve-run-catalog.ts RunCatalog). The model
 * catalog is parsed here, at start.
 */
export class CatalogModule {
  readonly models: ModelCatalog;
  readonly skills: SkillCatalog;
  readonly environments: Environments;
  readonly guests: EnvironmentGuests;

  constructor({ config, db, logger }: { config: CatalogModuleConfig; db: PrismaClient; logger: Logger }) {
    this.models = ModelCatalog.fromConfig(config);
    const egress = {
      policy: new EgressPolicy(config.EGRESS_ALLOWED_ADDRESSES),
      allowedSchemes: config.GIT_ALLOWED_SCHEMES,
      allowLocal: config.GIT_ALLOW_LOCAL_URLS,
    };
    const scanner = new GitSkillScanner((url) => planGitFetch(url, egress));
    const cache = new SkillRepositoryCache(
      db,
      scanner,
      config.SKILL_CACHE_TTL_MS,
      logger.child({ component: 'skill-cache' }),
    );
    this.skills = new SkillCatalog(db, cache);
    this.environments = new Environments({
      db,
      gitBaseUrl: config.GIT_BASE_URL,
      allowLocalRepositories: config.GIT_ALLOW_LOCAL_URLS,
    });
    this.guests = new EnvironmentGuests(db, this.environments);
  }
}
