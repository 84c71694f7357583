import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '@conveyor/proto';
import { apiKeyMatches, parseApiKey } from './api-key';

const unauthenticated = () => new AppError('authentication_required', 'A valid API key is required');

/** Resolves an API key to the caller it acts for; every failure looks the same to the outside. */
export async function authenticateApiKey(db: PrismaClient, apiKey: string, now = new Date()): Promise<Caller> {
  const parsed = parseApiKey(apiKey);
  if (!parsed) throw unauthenticated();
  const key = await db.apiKey.findUnique({
    where: { prefix: parsed.prefix },
    include: { user: true, agentIdentity: true },
  });
  if (!key || !apiKeyMatches(apiKey, key.secretHash)) throw unauthenticated();
  if (key.revokedAt || (key.expiresAt && key.expiresAt <= now)) throw unauthenticated();
  // Best effort and coarse (once a minute) so authentication stays a read on the hot path.
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > 60_000) {
    void db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: now } }).catch(() => undefined);
  }
  if (key.agentIdentity) {
    return {
      team_id: key.teamId,
      principal_type: 'AGENT',
      principal_id: key.agentIdentity.id,
      role: 'MEMBER',
      api_key_id: key.id,
      run_id: key.runId ?? '',
      display_name: key.agentIdentity.name,
      email: '',
    };
  }
  if (key.user) {
    return {
      team_id: key.teamId,
      principal_type: 'USER',
      principal_id: key.user.id,
      role: key.user.role,
      api_key_id: key.id,
      run_id: key.runId ?? '',
      display_name: key.user.displayName,
      email: key.user.email,
    };
  }
  throw unauthenticated();
}
