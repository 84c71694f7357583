import { AppError, notFound } from '@conveyor/errors';
import type { Environment, EnvironmentAccess, Prisma, PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';

type Db = PrismaClient | Prisma.TransactionClient;

export const ENVIRONMENT_ID = /^[A-Za-z0-9]{22}$/;

export type EnvironmentWithGrants = Environment & { grants: EnvironmentAccess[] };

/**
 * The one reachability rule (docs/catalog.md): team-scoped environments of the caller's team, user-scoped ones the
 * caller owns, and any environment the caller is a guest of or reached by its link.
 */
export function reachableBy(caller: Caller): Prisma.EnvironmentWhereInput {
  return {
    OR: [
      { teamId: caller.team_id, scopeType: 'TEAM' },
      { teamId: caller.team_id, scopeType: 'USER', ownerId: caller.principal_id },
      { grants: { some: { principalId: caller.principal_id } } },
    ],
  };
}

/** The environment if the ID is well formed and the caller can reach it. */
export async function findReachableEnvironment(
  db: Db,
  caller: Caller,
  environmentId: string,
): Promise<EnvironmentWithGrants | null> {
  return ENVIRONMENT_ID.test(environmentId)
    ? db.environment.findFirst({
        where: { AND: [{ id: environmentId }, reachableBy(caller)] },
        include: { grants: true },
      })
    : null;
}

/** A malformed ID, a missing environment and an unreachable one answer the same 404. */
export async function findEnvironmentForCaller(
  db: Db,
  caller: Caller,
  environmentId: string,
): Promise<EnvironmentWithGrants> {
  const env = await findReachableEnvironment(db, caller, environmentId);
  if (!env) throw notFound('Environment');
  return env;
}

/** How the caller reaches it, for the response's `access`. */
/** How the caller reaches an environment: its team's (or their own), as a guest, or through a shared link. */
export type EnvironmentReach = 'owner' | 'guest' | 'link';

export function accessOf(env: EnvironmentWithGrants, caller: Caller): EnvironmentReach {
  if (env.teamId === caller.team_id && (env.scopeType === 'TEAM' || env.ownerId === caller.principal_id))
    return 'owner';
  return env.grants.some((g) => g.principalId === caller.principal_id && g.kind === 'GUEST')
    ? 'guest'
    : 'link';
}

/** Managing (update, delete, guests, link) is for the owner: the user-scope owner, or a team admin or the creator. */
export function canManage(env: Environment, caller: Caller): boolean {
  return (
    env.teamId === caller.team_id &&
    (env.scopeType === 'USER'
      ? env.ownerId === caller.principal_id
      : caller.role === 'ADMIN' || env.createdById === caller.principal_id)
  );
}

export function assertCanManage(env: Environment, caller: Caller): void {
  if (!canManage(env, caller))
    throw new AppError(
      'not_authorized',
      'Only the environment owner (or a team admin for team environments) can manage it',
    );
}
