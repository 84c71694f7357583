import type { PrismaClient } from '@conveyor/db';
import { createUserApiKey } from '../auth/team-admin';

export const DEV_TEAM_ID = 'team_dev';
export const DEV_USER_ID = 'user_dev';

/** Idempotent dev seed: one team and one admin user; a fresh key each call, since keys are shown only once. */
export async function seedDev(db: PrismaClient): Promise<{ teamId: string; userId: string; apiKey: string }> {
  await db.team.upsert({ where: { id: DEV_TEAM_ID }, update: {}, create: { id: DEV_TEAM_ID, name: 'Dev Team' } });
  await db.user.upsert({
    where: { id: DEV_USER_ID },
    update: {},
    create: { id: DEV_USER_ID, teamId: DEV_TEAM_ID, email: 'dev@conveyor.local', displayName: 'Dev User', role: 'ADMIN' },
  });
  const key = await createUserApiKey(db, { userId: DEV_USER_ID, name: 'dev seed' });
  return { teamId: DEV_TEAM_ID, userId: DEV_USER_ID, apiKey: key.key };
}
