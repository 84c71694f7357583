import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GitFetchPlan } from '../egress/git-egress';
import { git } from '../egress/run-git';
import { parseSkillFile, skillDirectoryName } from './skill-file';

/** One SKILL.md of a repository at a commit, parsed (or not: `error` says why). */
export interface ScannedSkill {
  path: string;
  name: string;
  description: string;
  instructions: string;
  error?: string;
}

export interface RepositoryScan {
  commitSha: string;
  skills: ScannedSkill[];
}

const MAX_SKILL_FILE_BYTES = 256 * 1024;

/**
 * Finds SKILL.md files with git itself (no checkout): `ls-remote` for the head commit, which keys the cache,
 * and a shallow bare clone to list and read the files when the cache has nothing for that commit.
 */
export class GitSkillScanner {
  /** `plan` checks each URL against the egress rules right before git reaches it (docs/security.md). */
  constructor(private readonly plan: (url: string) => Promise<GitFetchPlan>) {}

  /** The commit HEAD points at, or '' for an empty repository. */
  async headCommit(url: string): Promise<string> {
    const { configArgs, env } = await this.plan(url);
    const out = await git([...configArgs, 'ls-remote', '--', url, 'HEAD'], { env });
    return out.split(/\s+/)[0] ?? '';
  }

  async scan(url: string, repo: string): Promise<RepositoryScan> {
    const { configArgs, env } = await this.plan(url);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-skills-'));
    try {
      await git([...configArgs, 'clone', '--quiet', '--bare', '--depth', '1', '--', url, dir], { env });
      let commitSha: string;
      try {
        commitSha = (await git(['rev-parse', 'HEAD'], { cwd: dir })).trim();
      } catch {
        return { commitSha: '', skills: [] }; // empty repository: no HEAD yet
      }
      const listing = await git(['ls-tree', '-r', '-z', '--long', 'HEAD'], { cwd: dir });
      const skills: ScannedSkill[] = [];
      for (const entry of listing.split('\0').filter(Boolean)) {
        // "<mode> <type> <sha> <size>\t<path>"
        const tab = entry.indexOf('\t');
        const [, type, , size] = entry.slice(0, tab).trim().split(/\s+/);
        const filePath = entry.slice(tab + 1);
        if (type !== 'blob' || path.posix.basename(filePath) !== 'SKILL.md') continue;
        const fallback = skillDirectoryName(filePath, repo);
        if (Number(size) > MAX_SKILL_FILE_BYTES) {
          skills.push({
            path: filePath,
            name: fallback,
            description: '',
            instructions: '',
            error: `SKILL.md is larger than ${MAX_SKILL_FILE_BYTES} bytes`,
          });
          continue;
        }
        const parsed = parseSkillFile(await git(['show', `HEAD:${filePath}`], { cwd: dir }), fallback);
        skills.push(
          parsed.ok
            ? {
                path: filePath,
                name: parsed.name,
                description: parsed.description,
                instructions: parsed.instructions,
              }
            : { path: filePath, name: parsed.name, description: '', instructions: '', error: parsed.error },
        );
      }
      return { commitSha, skills };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
