import type { PrismaClient } from '@conveyor/db';
import { createUserApiKey } from '../auth/team-admin';
import { CLI_KINDS } from '@conveyor/harnesses';
import type { CliConfig } from '../config';
import { SecretCipher } from '../secrets/secret-cipher';
import { writeTeamSecret } from '../secrets/team-secrets';

export const DEV_TEAM_ID = 'team_dev';
export const DEV_USER_ID = 'user_dev';

/**
 * Idempotent dev seed: one team and one admin user; a fresh key each call, since keys are shown only once. Provider
 * keys found in the config under the CLIs' own names (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) become the dev
 * team's secrets of the same names, the ones runs of the claude, codex and gemini harnesses use by default.
 */
export async function seedDev(
  db: PrismaClient,
  config: CliConfig,
): Promise<{ teamId: string; userId: string; apiKey: string; providerSecrets: string[] }> {
  await db.team.upsert({
    where: { id: DEV_TEAM_ID },
    update: {},
    create: { id: DEV_TEAM_ID, name: 'Dev Team' },
  });
  await db.user.upsert({
    where: { id: DEV_USER_ID },
    update: {},
    create: {
      id: DEV_USER_ID,
      teamId: DEV_TEAM_ID,
      email: 'dev@conveyor.local',
      displayName: 'Dev User',
      role: 'ADMIN',
    },
  });
  const key = await createUserApiKey(db, { userId: DEV_USER_ID, name: 'dev seed' });
  const found = Object.values(CLI_KINDS).flatMap(({ defaultSecretName: name }) => {
    const value = config[name]?.trim();
    return value ? [{ name, value }] : [];
  });
  // The secrets key is needed only when there is a key to store.
  const cipher = found.length > 0 ? SecretCipher.fromConfig(config) : undefined;
  for (const { name, value } of found)
    await writeTeamSecret(db, cipher!, { teamId: DEV_TEAM_ID, name, value, createdById: DEV_USER_ID });
  const providerSecrets = found.map((f) => f.name);
  return { teamId: DEV_TEAM_ID, userId: DEV_USER_ID, apiKey: key.key, providerSecrets };
}
