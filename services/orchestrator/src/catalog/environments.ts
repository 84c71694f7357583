import { randomBytes } from 'node:crypto';
import { AppError, notFound } from '@conveyor/errors';
import { newEnvironmentId, newId, type Prisma, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import {
  assertCanManage,
  findEnvironmentForCaller,
  reachableBy,
  type EnvironmentWithGrants,
} from './environment-access';
import { parseEnvironmentBody, repositoriesOf } from './environment-input';
import { environmentViews, type EnvironmentView } from './environment-view';

export interface EnvironmentDeps {
  db: PrismaClient;
  gitBaseUrl: string;
  allowLocalRepositories: boolean;
}

const json = (v: unknown) => v as Prisma.InputJsonValue;

/** Create, read, update, delete and link sharing of environments (docs/catalog.md); guests: EnvironmentGuests. */
export class Environments {
  constructor(private readonly deps: EnvironmentDeps) {}

  private async one(caller: Caller, env: EnvironmentWithGrants): Promise<EnvironmentView> {
    return (await environmentViews(this.deps.db, caller, [env]))[0]!;
  }

  async create(caller: Caller, bodyJson: string): Promise<EnvironmentView> {
    const body = parseEnvironmentBody(bodyJson);
    if (!body.name) throw new AppError('invalid_request', 'name is required');
    const repositories =
      repositoriesOf(body, {
        gitBaseUrl: this.deps.gitBaseUrl,
        allowLocal: this.deps.allowLocalRepositories,
      }) ?? [];
    const team = body.team ?? true;
    const now = new Date();
    const env = await this.deps.db.environment.create({
      data: {
        id: newEnvironmentId(),
        teamId: caller.team_id,
        scopeType: team ? 'TEAM' : 'USER',
        ownerId: team ? caller.team_id : caller.principal_id,
        name: body.name,
        description: body.description ?? null,
        dockerImage: body.docker_image || null,
        repositories: json(repositories),
        setupCommands: body.setup_commands ?? [],
        allowedHosts: body.allowed_hosts ?? [],
        snapshots: body.snapshot ?? true,
        failureSessionRetentionMinutes: body.failure_session_retention_minutes ?? null,
        setupTimeoutSeconds: body.setup_timeout_seconds ?? null,
        createdById: caller.principal_id,
        lastEditorId: caller.principal_id,
        createdAt: now,
        updatedAt: now,
      },
      include: { grants: true },
    });
    return this.one(caller, env);
  }

  async list(caller: Caller, sortBy: string): Promise<EnvironmentView[]> {
    if (sortBy && sortBy !== 'name' && sortBy !== 'last_updated')
      throw new AppError('invalid_request', 'sort_by must be name or last_updated');
    const envs = await this.deps.db.environment.findMany({
      where: reachableBy(caller),
      include: { grants: true },
      orderBy: sortBy === 'name' ? [{ name: 'asc' }, { id: 'asc' }] : [{ updatedAt: 'desc' }, { id: 'asc' }],
    });
    return environmentViews(this.deps.db, caller, envs);
  }

  async get(caller: Caller, id: string): Promise<EnvironmentView> {
    return this.one(caller, await findEnvironmentForCaller(this.deps.db, caller, id));
  }

  /** Partial: omitted keys stay, null clears the nullable ones, arrays replace wholesale. Scope never changes. */
  async update(caller: Caller, id: string, bodyJson: string): Promise<EnvironmentView> {
    const body = parseEnvironmentBody(bodyJson);
    const env = await findEnvironmentForCaller(this.deps.db, caller, id);
    assertCanManage(env, caller);
    if (body.team !== undefined)
      throw new AppError('invalid_request', 'team cannot be changed after creation');
    const repositories = repositoriesOf(body, {
      gitBaseUrl: this.deps.gitBaseUrl,
      allowLocal: this.deps.allowLocalRepositories,
    });
    const updated = await this.deps.db.environment.update({
      where: { id: env.id },
      data: {
        ...(body.name ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.docker_image !== undefined ? { dockerImage: body.docker_image || null } : {}),
        ...(repositories ? { repositories: json(repositories) } : {}),
        ...(body.setup_commands !== undefined ? { setupCommands: body.setup_commands ?? [] } : {}),
        ...(body.allowed_hosts !== undefined ? { allowedHosts: body.allowed_hosts ?? [] } : {}),
        ...(body.snapshot !== undefined ? { snapshots: body.snapshot ?? true } : {}),
        ...(body.failure_session_retention_minutes !== undefined
          ? { failureSessionRetentionMinutes: body.failure_session_retention_minutes }
          : {}),
        ...(body.setup_timeout_seconds !== undefined
          ? { setupTimeoutSeconds: body.setup_timeout_seconds }
          : {}),
        lastEditorId: caller.principal_id,
        updatedAt: new Date(),
      },
      include: { grants: true },
    });
    return this.one(caller, updated);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const env = await findEnvironmentForCaller(this.deps.db, caller, id);
    assertCanManage(env, caller);
    await this.deps.db.environment.delete({ where: { id: env.id } });
  }

  /** The link's secret part: 32 random bytes, URL-safe. Enabling again returns the same token. */
  async enableLink(caller: Caller, id: string): Promise<{ environment_id: string; token: string }> {
    const env = await findEnvironmentForCaller(this.deps.db, caller, id);
    assertCanManage(env, caller);
    if (env.shareToken) return { environment_id: env.id, token: env.shareToken };
    const token = randomBytes(32).toString('base64url');
    await this.deps.db.environment.update({ where: { id: env.id }, data: { shareToken: token } });
    return { environment_id: env.id, token };
  }

  /** Turning the link off stops new redemptions and revokes access gained through it. */
  async disableLink(caller: Caller, id: string): Promise<void> {
    const env = await findEnvironmentForCaller(this.deps.db, caller, id);
    assertCanManage(env, caller);
    await this.deps.db.$transaction([
      this.deps.db.environment.update({ where: { id: env.id }, data: { shareToken: null } }),
      this.deps.db.environmentAccess.deleteMany({ where: { environmentId: env.id, kind: 'LINK' } }),
    ]);
  }

  async redeemLink(caller: Caller, token: string): Promise<EnvironmentView> {
    const env = token ? await this.deps.db.environment.findUnique({ where: { shareToken: token } }) : null;
    if (!env) throw notFound('Environment link');
    await this.deps.db.environmentAccess.upsert({
      where: {
        environmentId_principalId_kind: {
          environmentId: env.id,
          principalId: caller.principal_id,
          kind: 'LINK',
        },
      },
      create: { id: newId('eacc'), environmentId: env.id, principalId: caller.principal_id, kind: 'LINK' },
      update: {},
    });
    return this.get(caller, env.id);
  }
}
