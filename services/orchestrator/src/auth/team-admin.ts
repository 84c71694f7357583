import type { PrismaClient, TeamRole } from '@conveyor/db';
import { newId } from '@conveyor/db';
import { generateApiKey } from './api-key';

/** Administrative writes used by the `conveyor` CLI and the dev seed; the public API never creates teams. */
export async function createTeam(db: PrismaClient, name: string, id = newId('team')) {
  return db.team.create({ data: { id, name } });
}

export async function createUser(
  db: PrismaClient,
  input: { teamId: string; email: string; displayName?: string; role?: TeamRole; id?: string },
) {
  return db.user.create({
    data: {
      id: input.id ?? newId('user'),
      teamId: input.teamId,
      email: input.email,
      displayName: input.displayName ?? input.email.split('@')[0] ?? input.email,
      role: input.role ?? 'MEMBER',
    },
  });
}

/** Returns the plaintext key exactly once; only its hash is stored. */
export async function createUserApiKey(db: PrismaClient, input: { userId: string; name: string }) {
  const user = await db.user.findUniqueOrThrow({ where: { id: input.userId } });
  const generated = generateApiKey();
  const row = await db.apiKey.create({
    data: {
      id: newId('key'),
      teamId: user.teamId,
      userId: user.id,
      name: input.name,
      prefix: generated.prefix,
      secretHash: generated.secretHash,
    },
  });
  return { id: row.id, prefix: row.prefix, key: generated.key };
}

export async function revokeApiKey(db: PrismaClient, id: string) {
  return db.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
}
