import type { PrismaClient, Run } from '@conveyor/db';
import type { Environment as EnvironmentProto } from '@conveyor/proto';
import type { Caller } from '../auth/caller';
import { accessOf, type EnvironmentWithGrants } from './environment-access';
import { repositorySpec, type RepositoryRef } from '../egress/repository-url';

const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');

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
  };
}

type Principal = { type: string; uid: string; display_name: string; email: string };

/** Display names of the creators and last editors on a page: one query for users, one for agent identities. */
async function principals(db: PrismaClient, ids: string[]): Promise<Map<string, Principal>> {
  const unique = [...new Set(ids)];
  const [users, agents] = await Promise.all([
    db.user.findMany({ where: { id: { in: unique } }, select: { id: true, displayName: true, email: true } }),
    db.agentIdentity.findMany({ where: { id: { in: unique } }, select: { id: true, name: true } }),
  ]);
  const map = new Map<string, Principal>();
  for (const u of users)
    map.set(u.id, { type: 'USER', uid: u.id, display_name: u.displayName, email: u.email });
  for (const a of agents) map.set(a.id, { type: 'AGENT', uid: a.id, display_name: a.name, email: '' });
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

export async function environmentsToProto(
  db: PrismaClient,
  caller: Caller,
  envs: EnvironmentWithGrants[],
): Promise<EnvironmentProto[]> {
  const [people, latest] = await Promise.all([
    principals(
      db,
      envs.flatMap((e) => [e.createdById, e.lastEditorId]),
    ),
    latestRuns(
      db,
      caller,
      envs.map((e) => e.id),
    ),
  ]);
  const who = (id: string): Principal => people.get(id) ?? { type: '', uid: id, display_name: '', email: '' };
  return envs.map((env) => {
    const run = latest.get(env.id);
    return {
      uid: env.id,
      config_json: JSON.stringify(environmentConfig(env)),
      last_updated: iso(env.updatedAt),
      created_at: iso(env.createdAt),
      setup_failed: run?.errorCode === 'environment_setup_failed',
      creator: who(env.createdById),
      last_editor: who(env.lastEditorId),
      last_task_created_json: run
        ? JSON.stringify({
            id: run.id,
            title: run.title,
            state: run.state,
            created_at: iso(run.createdAt),
            updated_at: iso(run.updatedAt),
            started_at: run.startedAt ? iso(run.startedAt) : null,
          })
        : '',
      last_task_run_timestamp: iso(run?.startedAt ?? run?.createdAt),
      scope_type: env.scopeType === 'USER' ? 'User' : 'Team',
      scope_uid: env.scopeType === 'USER' ? env.ownerId : env.teamId,
      access: accessOf(env, caller),
      link_sharing_enabled: env.shareToken !== null,
    };
  });
}
