import { AppError, notFound } from '@conveyor/errors';
import { newId, type AgentIdentity as AgentIdentityRow, type Prisma, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import type { ModelCatalog } from '../catalog/model-catalog';
import { findEnvironmentForCaller } from '../catalog/environment-access';
import { applyUpdate, configFromCreate, toAgentResponse, type IdentityConfig } from './agent-identity-fields';
import { availableIdentityIds } from './identity-availability';

export interface AgentIdentityDeps {
  db: PrismaClient;
  models: ModelCatalog;
}

type Db = PrismaClient | Prisma.TransactionClient;

/** Team visibility: another team's identity answers exactly like a missing one. */
export async function findIdentityForCaller(db: Db, caller: Caller, uid: string): Promise<AgentIdentityRow> {
  const row = uid ? await db.agentIdentity.findFirst({ where: { id: uid, teamId: caller.team_id } }) : null;
  if (!row) throw notFound('Agent identity');
  return row;
}

/** Identities are team resources: every member reads them; creating, changing and deleting is for team admins. */
export function assertTeamAdmin(caller: Caller): void {
  if (caller.principal_type !== 'USER' || caller.role !== 'ADMIN')
    throw new AppError('not_authorized', 'Only team admins can manage agent identities');
}

function parseBody(json: string): Record<string, unknown> {
  try {
    const body: unknown = JSON.parse(json || '{}');
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new AppError('invalid_request', 'body must be a JSON object');
}

/** CRUD of agent identities (contract §6); every answer carries `available`. */
export class AgentIdentities {
  constructor(private readonly deps: AgentIdentityDeps) {}

  /** References in the config must make sense for the team: a known enabled model, a team environment. */
  private async checkReferences(caller: Caller, config: IdentityConfig): Promise<void> {
    if (typeof config.base_model === 'string') this.deps.models.resolve(config.base_model);
    if (typeof config.environment_id === 'string') {
      const env = await findEnvironmentForCaller(this.deps.db, caller, config.environment_id);
      if (env.teamId !== caller.team_id || env.scopeType !== 'TEAM')
        throw new AppError('invalid_request', 'environment_id must name an environment owned by the team');
    }
  }

  private async render(row: AgentIdentityRow): Promise<string> {
    const available = await availableIdentityIds(this.deps.db, row.teamId);
    return JSON.stringify(toAgentResponse(row, available.has(row.id)));
  }

  async create(caller: Caller, bodyJson: string): Promise<string> {
    assertTeamAdmin(caller);
    const body = parseBody(bodyJson);
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (!name) throw new AppError('invalid_request', 'name is required');
    const config = configFromCreate(body);
    await this.checkReferences(caller, config);
    const now = new Date();
    const row = await this.deps.db.agentIdentity.create({
      data: {
        id: newId('agent'),
        teamId: caller.team_id,
        name,
        config: config as Prisma.InputJsonValue,
        createdAt: now,
        updatedAt: now,
      },
    });
    return this.render(row);
  }

  async list(caller: Caller): Promise<string[]> {
    const [rows, available] = await Promise.all([
      this.deps.db.agentIdentity.findMany({
        where: { teamId: caller.team_id },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
      availableIdentityIds(this.deps.db, caller.team_id),
    ]);
    return rows.map((row) => JSON.stringify(toAgentResponse(row, available.has(row.id))));
  }

  async get(caller: Caller, uid: string): Promise<string> {
    return this.render(await findIdentityForCaller(this.deps.db, caller, uid));
  }

  async update(caller: Caller, uid: string, bodyJson: string): Promise<string> {
    const row = await findIdentityForCaller(this.deps.db, caller, uid);
    assertTeamAdmin(caller);
    const body = parseBody(bodyJson);
    if (
      body.name !== undefined &&
      body.name !== null &&
      (typeof body.name !== 'string' || !body.name.trim())
    ) {
      throw new AppError('invalid_request', 'name cannot be empty');
    }
    const config = applyUpdate((row.config ?? {}) as IdentityConfig, body);
    await this.checkReferences(caller, config);
    const updated = await this.deps.db.agentIdentity.update({
      where: { id: row.id },
      data: {
        ...(typeof body.name === 'string' ? { name: body.name.trim() } : {}),
        config: config as Prisma.InputJsonValue,
      },
    });
    return this.render(updated);
  }

  /** The identity and every API key it owns go in one transaction: no key outlives its identity. */
  async delete(caller: Caller, uid: string): Promise<void> {
    const row = await findIdentityForCaller(this.deps.db, caller, uid);
    assertTeamAdmin(caller);
    await this.deps.db.$transaction(async (tx) => {
      await tx.apiKey.deleteMany({ where: { agentIdentityId: row.id } });
      await tx.agentIdentity.delete({ where: { id: row.id } });
    });
  }
}
