import type { Prisma, PrismaClient } from '@conveyor/db';
import { redactUrl, type Logger } from '@conveyor/logger';
import type { GitSkillScanner, ScannedSkill } from './git-skill-scanner';

/**
 * Skills per repository, cached in PostgreSQL by head commit so every orchestrator replica shares it: within the
 * TTL the row is served as is; after it, `ls-remote` decides whether the commit moved and a rescan is needed.
 * A repository that cannot be read yields no skills (logged) rather than failing the whole listing.
 */
export class SkillRepositoryCache {
  constructor(
    private readonly db: PrismaClient,
    private readonly scanner: GitSkillScanner,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  async clear(urls: string[]): Promise<void> {
    if (urls.length) await this.db.skillRepoCache.deleteMany({ where: { repoUrl: { in: urls } } });
  }

  async skills(url: string, repo: string, now = new Date()): Promise<ScannedSkill[]> {
    const cached = await this.db.skillRepoCache.findUnique({ where: { repoUrl: url } });
    if (cached && now.getTime() - cached.fetchedAt.getTime() < this.ttlMs)
      return cached.skills as unknown as ScannedSkill[];
    try {
      if (cached) {
        const head = await this.scanner.headCommit(url);
        if (head === cached.commitSha) {
          await this.db.skillRepoCache.update({ where: { repoUrl: url }, data: { fetchedAt: now } });
          return cached.skills as unknown as ScannedSkill[];
        }
      }
      const scan = await this.scanner.scan(url, repo);
      const skills = scan.skills as unknown as Prisma.InputJsonValue;
      await this.db.skillRepoCache.upsert({
        where: { repoUrl: url },
        create: { repoUrl: url, commitSha: scan.commitSha, skills, fetchedAt: now },
        update: { commitSha: scan.commitSha, skills, fetchedAt: now },
      });
      return scan.skills;
    } catch (err) {
      this.logger.warn(
        { repoUrl: redactUrl(url), err: redactUrl((err as Error).message) },
        'skill discovery failed for a repository',
      );
      return cached ? (cached.skills as unknown as ScannedSkill[]) : [];
    }
  }
}
