import { AppError, notFound } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import { ENVIRONMENT_ID } from '../catalog/environment-access';
import type { ModelCatalog } from '../catalog/model-catalog';
import { repositorySpec, withoutPush, type RepositoryRef } from '../egress/repository-url';
import type { SkillCatalog } from '../catalog/skill-catalog';
import { assertIdentityAvailable } from '../identities/identity-availability';
import { parseHarnessName } from '@conveyor/harnesses';
import type { RunReferences } from './run-references';

/** What run creation needs from the catalog (catalog/catalog-module.ts has both). */
export interface RunCatalog {
  models: ModelCatalog;
  skills: Pick<SkillCatalog, 'resolve'>;
}

export interface ResolvedRunCatalog {
  /** The request's config with model_id (and environment_id, skill_spec) resolved. */
  config: Record<string, unknown>;
  /** The normalized skill spec, or the one given when it names no discovered skill. */
  skill?: string;
  skillInstructions?: string;
  /** `{repositories, setup_commands}` for the runner (services/runner/src/environment-setup.ts). */
  environmentSpec?: {
    repositories: Array<ReturnType<typeof repositorySpec>>;
    setup_commands: string[];
    allowed_hosts: string[];
    docker_image?: string;
    /** Present (false) only for an environment that opted out of snapshots. */
    snapshot?: false;
    /** Present only when the environment sets it; the runner applies the default otherwise. */
    setup_timeout_seconds?: number;
  };
}

/**
 * Checks and defaults a run takes from the catalog (docs/catalog.md), before its transaction (git may be slow):
 * - executor identity (`agent_identity_uid`, or the identity whose key is calling) must be available (403);
 * - model: `harness.model_id` → `model_id` → identity base_model → the catalog's default for the run's harness;
 *   unknown, disabled, or not offered for that harness → 400;
 * - environment: run → identity default; malformed → 400; not reachable by the caller → 404; a guest's run of
 *   another team's environment clones its repositories but pushes none (docs/guests.md "Pushes");
 * - skill: resolved to one SKILL.md of the caller's environments (its instructions go to the harness).
 */
export async function resolveRunCatalog(
  catalog: RunCatalog,
  references: RunReferences,
  caller: Caller,
  /** `harness`: the harness the run executes (harness-types.ts), which decides the models it may use. */
  input: { config?: Record<string, unknown>; skill?: string; agentIdentityUid?: string; harness?: string },
): Promise<ResolvedRunCatalog> {
  const config: Record<string, unknown> = { ...(input.config ?? {}) };
  const identityId =
    input.agentIdentityUid ?? (caller.principal_type === 'AGENT' ? caller.principal_id : undefined);
  let identityConfig: Record<string, unknown> = {};
  if (identityId) {
    // Another team's identity answers exactly like a missing one.
    const identity = await references.findIdentity(caller.team_id, identityId);
    if (!identity) throw notFound('Agent identity');
    assertIdentityAvailable(await references.availableIdentityIds(caller.team_id), identity.id);
    identityConfig = (identity.config ?? {}) as Record<string, unknown>;
  }

  const harnessModel = (config.harness as { model_id?: unknown } | undefined)?.model_id;
  const requestedModel = [harnessModel, config.model_id, identityConfig.base_model].find(
    (m): m is string => typeof m === 'string' && m.trim() !== '',
  );
  config.model_id = catalog.models.resolve(requestedModel, parseHarnessName(input.harness ?? '').cli).id;

  let environmentSpec: ResolvedRunCatalog['environmentSpec'];
  const environmentId =
    typeof config.environment_id === 'string' && config.environment_id
      ? config.environment_id
      : typeof identityConfig.environment_id === 'string'
        ? identityConfig.environment_id
        : undefined;
  if (environmentId) {
    if (!ENVIRONMENT_ID.test(environmentId))
      throw new AppError('invalid_request', 'environment_id must be 22 characters of [A-Za-z0-9]');
    const env = await references.findEnvironment(caller, environmentId);
    if (!env) throw notFound('Environment');
    config.environment_id = env.id;
    const guest = env.teamId !== caller.team_id;
    environmentSpec = {
      repositories: ((env.repositories ?? []) as unknown as RepositoryRef[])
        .map(repositorySpec)
        .map((r) => (guest ? withoutPush(r) : r)),
      setup_commands: env.setupCommands,
      allowed_hosts: env.allowedHosts,
      // Honoured by the runner's container sandbox backend (docs/sandbox.md).
      ...(env.dockerImage ? { docker_image: env.dockerImage } : {}),
      ...(env.snapshots ? {} : { snapshot: false as const }),
      ...(env.setupTimeoutSeconds ? { setup_timeout_seconds: env.setupTimeoutSeconds } : {}),
    };
  }

  const skill =
    input.skill ??
    (typeof config.skill_spec === 'string' ? config.skill_spec : undefined) ??
    (Array.isArray(config.skills) ? (config.skills[0] as string | undefined) : undefined);
  if (!skill) return { config, environmentSpec };
  const variant =
    (environmentId ? await catalog.skills.resolve(caller, skill, environmentId) : undefined) ??
    (await catalog.skills.resolve(caller, skill));
  if (!variant) return { config, skill, environmentSpec };
  config.name ??= variant.name;
  return { config, skill: variant.id, skillInstructions: variant.base_prompt, environmentSpec };
}
