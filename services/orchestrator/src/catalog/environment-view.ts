import type { EnvironmentSnapshot, PrismaClient, Run } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { accessOf, type EnvironmentReach, type EnvironmentWithGrants } from './environment-access';
import { repositorySpec, type RepositoryRef } from '../egress/repository-url';
import { snapshotStates } from './environment-snapshot-state';

export function environmentConfig(env: EnvironmentWithGrants): Record<string, unknown> {
  const repos = (env.repositories ?? []) as unknown as RepositoryRef[];
  return {
    name: env.name,
    description: env.description,
    ...(env.dockerImage ? { docker_image: env.dockerImage } : {}),
    github_repos: repos.map((r) => ({ owner: r.owner, repo: r.repo })),
    repositories: repos.map(repositorySpec),
    setup_commands: env.setupCommands,
    allowed_hosts: env.allowedHosts,
    snapshot: env.snapshots,
    failure_session_retention_minutes: env.failureSessionRetentionMinutes,
    setup_timeout_seconds: env.setupTimeoutSeconds,
  };
}

/** Who created or last edited an environment, with the name to show; type is '' for a principal since deleted. */
export interface Principal {
  type: string;
  uid: string;
  displayName: string;
  email: string;
}

/** An environment as the caller sees it: its row, its config, who made it, its latest run and the caller's access. */
export interface EnvironmentView {
  environment: EnvironmentWithGrants;
  config: Record<string, unknown>;
  creator: Principal;
  lastEditor: Principal;
  /** The latest of the caller's team's runs in it. */
  latestRun?: Run;
  /** The caller's team's snapshot of it, as last reported; none while the environment keeps no snapshots. */
  snapshot?: EnvironmentSnapshot;
  access: EnvironmentReach;
}

/** Display names of the creators and last editors on a page: one query for users, one for agent identities. */
async function principals(db: PrismaClient, ids: string[]): Promise<Map<string, Principal>> {
  const unique = [...new Set(ids)];
  const [users, agents] = await Promise.all([
    db.user.findMany({ where: { id: { in: unique } }, select: { id: true, displayName: true, email: true } }),
    db.agentIdentity.findMany({ where: { id: { in: unique } }, select: { id: true, name: true } }),
  ]);
  const map = new Map<string, Principal>();
  for (const u of users)
    map.set(u.id, { type: 'USER', uid: u.id, displayName: u.displayName, email: u.email });
  for (const a of agents) map.set(a.id, { type: 'AGENT', uid: a.id, displayName: a.name, email: '' });
  return map;
}

/** Latest run per environment, among the caller's team's runs (other teams' runs stay invisible). */
async function latestRuns(
  db: PrismaClient,
  caller: Caller,
  environmentIds: string[],
): Promise<Map<string, Run>> {
  if (!environmentIds.length) return new Map();
  const runs = await db.run.findMany({
    where: { teamId: caller.team_id, environmentId: { in: environmentIds } },
    orderBy: [{ environmentId: 'asc' }, { createdAt: 'desc' }],
    distinct: ['environmentId'],
  });
  return new Map(runs.map((r) => [r.environmentId!, r]));
}

/**
 * Views of a page of environments: two queries for the people, one for the latest runs, one for the snapshot
 * states, whatever the page size.
 */
export async function environmentViews(
  db: PrismaClient,
  caller: Caller,
  envs: EnvironmentWithGrants[],
): Promise<EnvironmentView[]> {
  const ids = envs.map((e) => e.id);
  const [people, latest, snapshots] = await Promise.all([
    principals(
      db,
      envs.flatMap((e) => [e.createdById, e.lastEditorId]),
    ),
    latestRuns(db, caller, ids),
    snapshotStates(db, caller.team_id, ids),
  ]);
  const who = (id: string): Principal => people.get(id) ?? { type: '', uid: id, displayName: '', email: '' };
  return envs.map((env) => ({
    environment: env,
    config: environmentConfig(env),
    creator: who(env.createdById),
    lastEditor: who(env.lastEditorId),
    latestRun: latest.get(env.id),
    snapshot: env.snapshots ? snapshots.get(env.id) : undefined,
    access: accessOf(env, caller),
  }));
}
