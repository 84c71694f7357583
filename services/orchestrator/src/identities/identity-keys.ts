import { AppError, notFound } from '@conveyor/errors';
import { newId, type ApiKey, type PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { generateApiKey } from '../auth/api-key';
import { assertTeamAdmin, findIdentityForCaller } from './agent-identities';

/** An agent identity's API key as listed: never its secret; times are RFC 3339, empty when unset. */
export interface IdentityKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  revoked_at: string;
}

const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');

function toKey(row: ApiKey): IdentityKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: iso(row.createdAt),
    last_used_at: iso(row.lastUsedAt),
    expires_at: iso(row.expiresAt),
    revoked_at: iso(row.revokedAt),
  };
}

/** API keys an agent identity authenticates with: shown once at creation, listed by prefix, revoked by ID. */
export class IdentityKeys {
  constructor(private readonly db: PrismaClient) {}

  async create(
    caller: Caller,
    uid: string,
    name: string,
    expiresAt: string,
  ): Promise<{ key: IdentityKey; secret: string }> {
    const identity = await findIdentityForCaller(this.db, caller, uid);
    assertTeamAdmin(caller);
    const expires = expiresAt ? new Date(expiresAt) : null;
    if (expires && (Number.isNaN(expires.getTime()) || expires <= new Date()))
      throw new AppError('invalid_request', 'expires_at must be a future RFC 3339 time');
    const generated = generateApiKey();
    const row = await this.db.apiKey.create({
      data: {
        id: newId('key'),
        teamId: identity.teamId,
        agentIdentityId: identity.id,
        name: name.trim() || 'default',
        prefix: generated.prefix,
        secretHash: generated.secretHash,
        expiresAt: expires,
      },
    });
    return { key: toKey(row), secret: generated.key };
  }

  async list(caller: Caller, uid: string): Promise<IdentityKey[]> {
    const identity = await findIdentityForCaller(this.db, caller, uid);
    assertTeamAdmin(caller);
    const rows = await this.db.apiKey.findMany({
      where: { agentIdentityId: identity.id, runId: null },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map(toKey);
  }

  /** Revoking is idempotent; a key of another identity answers like a missing one. */
  async revoke(caller: Caller, uid: string, keyId: string): Promise<void> {
    const identity = await findIdentityForCaller(this.db, caller, uid);
    assertTeamAdmin(caller);
    const key = await this.db.apiKey.findFirst({ where: { id: keyId, agentIdentityId: identity.id } });
    if (!key) throw notFound('API key');
    if (!key.revokedAt)
      await this.db.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
  }
}
