import { AppError } from '@conveyor/errors';
import type { PrismaClient, TeamRole } from '@conveyor/db';
import type { Caller } from './caller';
import { apiKeyMatches, parseApiKey } from './api-key';

interface KeyRow {
  id: string;
  teamId: string;
  runId: string | null;
  secretHash: string;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  userId: string | null;
  userRole: TeamRole | null;
  userDisplayName: string | null;
  userEmail: string | null;
  agentId: string | null;
  agentName: string | null;
}

const unauthenticated = () => new AppError('authentication_required', 'A valid API key is required');

export interface Authenticated {
  caller: Caller;
  /** When the key stops working; null = never. The gateway's key cache must not outlive it. */
  expiresAt: Date | null;
}

/** Resolves an API key to the caller it acts for; every failure looks the same to the outside. */
export async function authenticateApiKey(
  db: PrismaClient,
  apiKey: string,
  now = new Date(),
): Promise<Authenticated> {
  const parsed = parseApiKey(apiKey);
  if (!parsed) throw unauthenticated();
  // One statement with both joins: Prisma's `include` would read the key, its user and its identity in three round
  // trips, and this read runs before every authenticated API request.
  const [key] = await db.$queryRaw<KeyRow[]>`
    SELECT k.id, k."teamId", k."runId", k."secretHash", k."lastUsedAt", k."expiresAt", k."revokedAt",
           u.id AS "userId", u.role AS "userRole", u."displayName" AS "userDisplayName", u.email AS "userEmail",
           a.id AS "agentId", a.name AS "agentName"
      FROM "ApiKey" k
      LEFT JOIN "User" u ON u.id = k."userId"
      LEFT JOIN "AgentIdentity" a ON a.id = k."agentIdentityId"
     WHERE k.prefix = ${parsed.prefix}`;
  if (!key || !apiKeyMatches(apiKey, key.secretHash)) throw unauthenticated();
  if (key.revokedAt || (key.expiresAt && key.expiresAt <= now)) throw unauthenticated();
  // Best effort and coarse (once a minute) so authentication stays a read on the hot path.
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > 60_000) {
    void db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: now } }).catch(() => undefined);
  }
  const caller = callerOf(key);
  if (!caller) throw unauthenticated();
  return { caller, expiresAt: key.expiresAt };
}

function callerOf(key: KeyRow): Caller | undefined {
  if (key.agentId) {
    return {
      team_id: key.teamId,
      principal_type: 'AGENT',
      principal_id: key.agentId,
      role: 'MEMBER',
      api_key_id: key.id,
      run_id: key.runId ?? '',
      display_name: key.agentName ?? '',
      email: '',
    };
  }
  if (key.userId) {
    return {
      team_id: key.teamId,
      principal_type: 'USER',
      principal_id: key.userId,
      role: key.userRole ?? 'MEMBER',
      api_key_id: key.id,
      run_id: key.runId ?? '',
      display_name: key.userDisplayName ?? '',
      email: key.userEmail ?? '',
    };
  }
  return undefined;
}
