import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * A team secret's name (the orchestrator's secrets/team-secrets.ts, and `push_secret_name` here): identifiers people
 * type into definition files: letters, digits, `_`, `-`, `.`; 1–128 long.
 */
export const SECRET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * A setup step's deadline (`setup_timeout_seconds`): a step past it is killed with everything in the sandbox and the
 * run ends FAILED naming it. Ten minutes covers a large clone or dependency install; a step may take at most an hour
 * (the default run timeout).
 */
export const DEFAULT_SETUP_TIMEOUT_SECONDS = 600;
export const MIN_SETUP_TIMEOUT_SECONDS = 5;
export const MAX_SETUP_TIMEOUT_SECONDS = 3600;

const repoName = z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be a repository owner or name');
const directory = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (d) => !d.startsWith('/') && !d.split('/').includes('..'),
    'must be a relative path inside the workspace',
  );
const allowedHost = z
  .string()
  .max(253)
  .regex(
    /^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
    'must be a host name or *.domain pattern (no ports or schemes)',
  )
  .refine((h) => isIP(h) === 0, 'must be a host name, not an address');

/**
 * CloudEnvironmentConfig (contract §0.11) plus `repositories` (any git URL) and `team` (scope at creation). Strict at
 * every level: the contract has no other keys, and a mistyped one (`allowed_host`) must fail, not be dropped.
 */
const environmentFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable(),
  docker_image: z.string().max(500).nullable(),
  github_repos: z
    .array(z.object({ owner: repoName, repo: repoName }).strict())
    .max(50)
    .nullable(),
  repositories: z
    .array(
      z
        .object({
          url: z.string().min(1).max(2000),
          directory: directory.optional(),
          ref: z.string().min(1).max(250).optional(),
          // The team secret holding a push credential: the run's work is pushed to `conveyor/run-<id>` (docs/harnesses.md).
          push_secret_name: z.string().regex(SECRET_NAME, 'must be a team secret name').optional(),
          // Open a pull request from the pushed branch through GitHub's REST API with the push secret's token.
          pull_request: z
            .object({
              base: z
                .string()
                .regex(/^(?!-)[A-Za-z0-9._/-]{1,250}$/, 'must be a branch name')
                .optional()
                .describe('The branch to merge into; default: the repository `ref`, else its default branch'),
              draft: z.boolean().optional(),
              title: z.string().trim().min(1).max(256).optional().describe("Default: the run's title"),
            })
            .strict()
            .optional(),
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
  // Egress hosts for this environment's runs on top of the installation's (docs/sandbox.md); names, not addresses.
  allowed_hosts: z.array(allowedHost).max(50).nullable(),
  // false: runs neither keep nor start from a snapshot of this environment's setup (docs/snapshots.md).
  snapshot: z.boolean().nullable(),
  failure_session_retention_minutes: z.number().int().min(1).max(60).nullable(),
  // Deadline of each setup step (a clone, a setup command); null = the default (docs/catalog.md).
  setup_timeout_seconds: z
    .number()
    .int()
    .min(MIN_SETUP_TIMEOUT_SECONDS)
    .max(MAX_SETUP_TIMEOUT_SECONDS)
    .nullable()
    .describe(
      `Seconds each setup step (repository clone, setup command) may take before the run fails; default ${DEFAULT_SETUP_TIMEOUT_SECONDS}`,
    ),
  // Accepted for compatibility; cloud provider federation is not implemented (docs/catalog.md).
  providers: z.record(z.unknown()).nullable(),
  team: z.boolean(),
};

export const createEnvironmentBody = z.object(environmentFields).partial().required({ name: true }).strict();
export const updateEnvironmentBody = z.object(environmentFields).omit({ team: true }).partial().strict();
/** Either body, as the orchestrator receives it: it tells create (name required) from update (no team) itself. */
export const environmentBody = z.object(environmentFields).partial().strict();

export type EnvironmentBody = z.infer<typeof environmentBody>;
