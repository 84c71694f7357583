import { SECRET_NAME } from '@conveyor/environment-body';
import { AppError } from '@conveyor/errors';
import { newId, type Prisma, type PrismaClient, type TeamSecret } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { requireFactoryManager } from '../factories/permissions';
import { teamSecretContext, type SecretCipher } from './secret-cipher';

export const MAX_SECRET_VALUE_BYTES = 8192;

export interface SecretView {
  name: string;
  createdAt: Date;
  updatedAt: Date;
  usedByWebhooks: string[];
}

type Db = PrismaClient | Prisma.TransactionClient;

export function validateSecretName(name: string, field = 'name'): string {
  if (!SECRET_NAME.test(name)) {
    throw new AppError(
      'invalid_request',
      `${field} must be 1-128 characters of letters, digits, "_", "-" or "." and not start with "-" or "."`,
    );
  }
  return name;
}

export function validateSecretValue(value: string, field = 'value'): string {
  if (value === '') throw new AppError('invalid_request', `${field} must not be empty`);
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_VALUE_BYTES)
    throw new AppError('invalid_request', `${field} must be at most ${MAX_SECRET_VALUE_BYTES} bytes`);
  return value;
}

/** Reads a secret's plaintext for internal use (webhook credentials); never exposed through the API. */
export async function readTeamSecretValue(
  db: Db,
  cipher: SecretCipher,
  teamId: string,
  name: string,
): Promise<string | undefined> {
  const row = await db.teamSecret.findUnique({ where: { teamId_name: { teamId, name } } });
  return row ? cipher.decrypt(row.ciphertext, row.keyId, teamSecretContext(teamId, name)) : undefined;
}

/** Writes (creates or replaces) a secret's value; webhooks using it keep their credential until they re-read it. */
export async function writeTeamSecret(
  db: Db,
  cipher: SecretCipher,
  input: { teamId: string; name: string; value: string; createdById?: string },
): Promise<TeamSecret> {
  const { ciphertext, keyId } = cipher.encrypt(input.value, teamSecretContext(input.teamId, input.name));
  const data = { ciphertext: new Uint8Array(ciphertext), keyId };
  return db.teamSecret.upsert({
    where: { teamId_name: { teamId: input.teamId, name: input.name } },
    create: {
      id: newId('sec'),
      teamId: input.teamId,
      name: input.name,
      createdById: input.createdById ?? null,
      ...data,
    },
    update: data,
  });
}

async function view(db: Db, rows: TeamSecret[]): Promise<SecretView[]> {
  if (rows.length === 0) return [];
  const teamId = rows[0]!.teamId;
  const users = await db.webhook.findMany({
    where: { teamId, secretName: { in: rows.map((r) => r.name) } },
    select: { id: true, secretName: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((r) => ({
    name: r.name,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    usedByWebhooks: users.filter((u) => u.secretName === r.name).map((u) => u.id),
  }));
}

export interface TeamSecretsDeps {
  db: PrismaClient;
  cipher: SecretCipher;
}

export async function createSecret(
  deps: TeamSecretsDeps,
  caller: Caller,
  input: { name: string; value: string },
): Promise<SecretView> {
  requireFactoryManager(caller, 'Creating a secret');
  const name = validateSecretName(input.name);
  const value = validateSecretValue(input.value);
  const existing = await deps.db.teamSecret.findUnique({
    where: { teamId_name: { teamId: caller.team_id, name } },
  });
  if (existing)
    throw new AppError('conflict', `A secret named "${name}" already exists; set its value instead`);
  const row = await writeTeamSecret(deps.db, deps.cipher, {
    teamId: caller.team_id,
    name,
    value,
    createdById: caller.principal_id,
  });
  return (await view(deps.db, [row]))[0]!;
}

/** Creates the secret or replaces its value. Webhooks pick a new value up the next time they apply or are enabled. */
export async function setSecretValue(
  deps: TeamSecretsDeps,
  caller: Caller,
  input: { name: string; value: string },
): Promise<SecretView> {
  requireFactoryManager(caller, 'Setting a secret');
  const name = validateSecretName(input.name);
  const value = validateSecretValue(input.value);
  const row = await writeTeamSecret(deps.db, deps.cipher, {
    teamId: caller.team_id,
    name,
    value,
    createdById: caller.principal_id,
  });
  return (await view(deps.db, [row]))[0]!;
}

export async function listSecrets(db: PrismaClient, caller: Caller): Promise<SecretView[]> {
  return view(
    db,
    await db.teamSecret.findMany({ where: { teamId: caller.team_id }, orderBy: { name: 'asc' } }),
  );
}

export async function getSecret(db: PrismaClient, caller: Caller, name: string): Promise<SecretView> {
  const row = await db.teamSecret.findUnique({ where: { teamId_name: { teamId: caller.team_id, name } } });
  if (!row) throw new AppError('resource_not_found', 'Secret not found');
  return (await view(db, [row]))[0]!;
}

/** Refused while a webhook is configured with the secret: its next apply or enable would have nothing to read. */
export async function deleteSecret(db: PrismaClient, caller: Caller, name: string): Promise<void> {
  requireFactoryManager(caller, 'Deleting a secret');
  const secret = await getSecret(db, caller, name);
  if (secret.usedByWebhooks.length > 0) {
    throw new AppError(
      'conflict',
      `Secret "${name}" is used by webhook(s) ${secret.usedByWebhooks.join(', ')}; delete them or point them at another secret first`,
    );
  }
  await db.teamSecret.delete({ where: { teamId_name: { teamId: caller.team_id, name } } });
}
