import { AppError } from '@conveyor/errors';
import type { Prisma } from '@conveyor/db';
import { webhookSecretContext, type SecretCipher } from '../secrets/secret-cipher';
import { DISPLAY_NAME, DISPLAY_NAME_RULE } from '../factories/display-name';
import {
  isAuthMode,
  isSignatureScheme,
  isValidHeaderName,
  MAX_WEBHOOKS_PER_FACTORY,
  SIGNATURE_SCHEMES,
  type AuthMode,
} from './webhook-rules';

/** The configuration fields every path (API, definitions) validates the same way. */
export function validateWebhookConfig(input: {
  name: string;
  authMode?: string;
  signatureScheme?: string;
  deliveryIdHeader?: string;
}): {
  name: string;
  authMode: AuthMode;
  signatureScheme: string | null;
  deliveryIdHeader: string | null;
} {
  const name = input.name.trim();
  if (!DISPLAY_NAME.test(name)) throw new AppError('invalid_request', `name must be ${DISPLAY_NAME_RULE}`);
  const authMode = input.authMode || 'token';
  if (!isAuthMode(authMode))
    throw new AppError('invalid_request', 'auth_mode must be one of token, url_token, signature');
  const scheme = input.signatureScheme || '';
  if (authMode === 'signature') {
    if (!isSignatureScheme(scheme))
      throw new AppError(
        'invalid_request',
        `signature_scheme must be one of ${SIGNATURE_SCHEMES.join(', ')} in signature mode`,
      );
  } else if (scheme) {
    throw new AppError('invalid_request', 'signature_scheme applies to auth_mode signature only');
  }
  const header = input.deliveryIdHeader?.trim() ?? '';
  if (header && !isValidHeaderName(header))
    throw new AppError(
      'invalid_request',
      'delivery_id_header must be an HTTP header name (at most 100 characters)',
    );
  return {
    name,
    authMode,
    signatureScheme: authMode === 'signature' ? scheme : null,
    deliveryIdHeader: header ? header.toLowerCase() : null,
  };
}

/** Locks the factory row so concurrent creations cannot exceed the per-factory limit between count and insert. */
export async function lockFactoryForWebhooks(
  tx: Prisma.TransactionClient,
  teamId: string,
  factoryId: string,
): Promise<void> {
  const locked = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM "Factory" WHERE id = ${factoryId} AND "teamId" = ${teamId} FOR UPDATE`;
  if (locked.length === 0) throw new AppError('resource_not_found', 'Factory not found');
}

export async function assertWebhookCapacity(
  tx: Prisma.TransactionClient,
  factoryId: string,
  adding = 1,
): Promise<void> {
  const count = await tx.webhook.count({ where: { factoryId } });
  if (count + adding > MAX_WEBHOOKS_PER_FACTORY) {
    throw new AppError(
      'conflict',
      `A factory holds at most ${MAX_WEBHOOKS_PER_FACTORY} webhooks; this one has ${count}. Delete one first.`,
    );
  }
}

/** The credential snapshot columns for `secret` (null = awaiting the provider's secret). */
export function credentialColumns(
  cipher: SecretCipher,
  uid: string,
  secret: string | undefined,
): { secretCiphertext: Uint8Array<ArrayBuffer> | null; secretKeyId: string | null } {
  if (secret === undefined) return { secretCiphertext: null, secretKeyId: null };
  const { ciphertext, keyId } = cipher.encrypt(secret, webhookSecretContext(uid));
  return { secretCiphertext: new Uint8Array(ciphertext), secretKeyId: keyId };
}
