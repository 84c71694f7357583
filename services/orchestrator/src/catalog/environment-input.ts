import { z } from 'zod';
import { AppError } from '@conveyor/errors';
import { SECRET_NAME } from '../secrets/team-secrets';
import {
  assertRepositoryUrlAllowed,
  githubRepoUrl,
  ownerAndRepo,
  type RepositoryRef,
} from '../egress/repository-url';

const repoName = z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be a GitHub owner or repository name');
const directory = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (d) => !d.startsWith('/') && !d.split('/').includes('..'),
    'must be a relative path inside the workspace',
  );

/** `repositories[].pull_request`: open a pull request from the pushed branch (docs/harnesses.md "Pull requests"). */
const pullRequestSchema = z
  .object({
    base: z
      .string()
      .regex(/^(?!-)[A-Za-z0-9._/-]{1,250}$/, 'must be a branch name')
      .optional(),
    draft: z.boolean().optional(),
    title: z.string().trim().min(1).max(256).optional(),
  })
  .strict();

/** The write body (CloudEnvironmentConfig plus our `repositories` and `team`), checked again on this side. */
export const environmentBodySchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).nullable(),
    docker_image: z.string().max(500).nullable(),
    github_repos: z
      .array(z.object({ owner: repoName, repo: repoName }).passthrough())
      .max(50)
      .nullable(),
    repositories: z
      .array(
        z
          .object({
            url: z.string().min(1).max(2000),
            directory: directory.optional(),
            ref: z.string().min(1).max(250).optional(),
            push_secret_name: z.string().regex(SECRET_NAME, 'must be a team secret name').optional(),
            pull_request: pullRequestSchema.optional(),
          })
          .strict()
          .refine((r) => !r.pull_request || r.push_secret_name, {
            message:
              'pull_request needs a push_secret_name (the pull request is opened from the pushed branch)',
            path: ['pull_request'],
          }),
      )
      .max(50)
      .nullable(),
    setup_commands: z.array(z.string().min(1).max(10_000)).max(100).nullable(),
    allowed_hosts: z.array(z.string().max(253)).max(50).nullable(),
    snapshot: z.boolean().nullable(),
    failure_session_retention_minutes: z.number().int().min(1).max(60).nullable(),
    team: z.boolean(),
  })
  .partial()
  .passthrough();

export type EnvironmentBody = z.infer<typeof environmentBodySchema>;

export function parseEnvironmentBody(json: string): EnvironmentBody {
  let raw: unknown;
  try {
    raw = JSON.parse(json || '{}');
  } catch {
    throw new AppError('invalid_request', 'body must be JSON');
  }
  const parsed = environmentBodySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError('invalid_request', `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * The repositories an environment clones: `github_repos` become URLs under GIT_BASE_URL, `repositories` are taken
 * as given (checked against the allowed URL forms). Undefined when neither key was sent (update: unchanged).
 */
export function repositoriesOf(
  body: EnvironmentBody,
  options: { gitBaseUrl: string; allowLocal: boolean },
): RepositoryRef[] | undefined {
  if (body.github_repos === undefined && body.repositories === undefined) return undefined;
  const refs: RepositoryRef[] = [];
  for (const r of body.github_repos ?? [])
    refs.push({ url: githubRepoUrl(options.gitBaseUrl, r.owner, r.repo), owner: r.owner, repo: r.repo });
  for (const r of body.repositories ?? []) {
    assertRepositoryUrlAllowed(r.url, options.allowLocal);
    refs.push({
      url: r.url,
      ...ownerAndRepo(r.url),
      ...(r.directory ? { directory: r.directory } : {}),
      ...(r.ref ? { ref: r.ref } : {}),
      ...(r.push_secret_name ? { push_secret_name: r.push_secret_name } : {}),
      ...(r.pull_request ? { pull_request: r.pull_request } : {}),
    });
  }
  const seen = new Set<string>();
  for (const r of refs) {
    if (r.url.startsWith('file:') || r.url.startsWith('/'))
      assertRepositoryUrlAllowed(r.url, options.allowLocal);
    if (seen.has(r.url)) throw new AppError('invalid_request', `repository ${r.url} is listed twice`);
    seen.add(r.url);
  }
  return refs;
}
