import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { newId, randomAlphanumeric, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';

const TOKEN_PATTERN = /^(cvw_[A-Za-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

const hash = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * A team's credential for its self-hosted workers: `cvw_<prefix>_<secret>` (a different prefix from API keys so
 * neither is mistaken for the other). Shown once; only a SHA-256 is stored, found by the public prefix.
 */
export async function createWorkerToken(
  db: PrismaClient,
  input: { teamId: string; name: string },
): Promise<{ id: string; prefix: string; token: string }> {
  const team = await db.team.findUnique({ where: { id: input.teamId }, select: { id: true } });
  if (!team) throw new AppError('resource_not_found', 'Team not found');
  const prefix = `cvw_${randomAlphanumeric(10)}`;
  const token = `${prefix}_${randomBytes(32).toString('base64url')}`;
  const row = await db.workerToken.create({
    data: { id: newId('wtok'), teamId: team.id, name: input.name, prefix, secretHash: hash(token) },
  });
  return { id: row.id, prefix, token };
}

export async function revokeWorkerToken(
  db: PrismaClient,
  id: string,
): Promise<{ id: string; revoked: true }> {
  await db.workerToken.update({ where: { id }, data: { revokedAt: new Date() } });
  return { id, revoked: true };
}

/** The token's row, or undefined for anything unknown, wrong or revoked (callers answer all alike). */
export async function authenticateWorkerToken(
  db: PrismaClient,
  token: string,
): Promise<{ id: string; teamId: string } | undefined> {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return undefined;
  const row = await db.workerToken.findUnique({ where: { prefix: match[1]! } });
  if (!row || row.revokedAt) return undefined;
  const given = Buffer.from(hash(token), 'hex');
  const stored = Buffer.from(row.secretHash, 'hex');
  if (given.length !== stored.length || !timingSafeEqual(given, stored)) return undefined;
  return { id: row.id, teamId: row.teamId };
}
