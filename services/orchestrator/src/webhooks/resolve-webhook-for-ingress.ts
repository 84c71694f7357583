import type { PrismaClient } from '@conveyor/db';
import type { IngressWebhook } from '@conveyor/webhook-auth';
import { webhookSecretContext, type SecretCipher } from '../secrets/secret-cipher';

/** The ingress's view of a webhook, with the credential decrypted (see WebhookIngressService in webhooks.proto). */
export async function resolveWebhookForIngress(
  deps: { db: PrismaClient; cipher: SecretCipher },
  uid: string,
): Promise<IngressWebhook> {
  const row = uid ? await deps.db.webhook.findUnique({ where: { id: uid } }) : null;
  if (!row)
    return {
      found: false,
      enabled: false,
      authMode: '',
      signatureScheme: '',
      secret: '',
      awaitingSecret: false,
      deliveryIdHeader: '',
      teamId: '',
    };
  const secret =
    row.secretCiphertext && row.secretKeyId
      ? deps.cipher.decrypt(row.secretCiphertext, row.secretKeyId, webhookSecretContext(row.id))
      : '';
  return {
    found: true,
    enabled: row.enabled,
    authMode: row.authMode,
    signatureScheme: row.signatureScheme ?? '',
    secret,
    awaitingSecret: !row.secretCiphertext,
    deliveryIdHeader: row.deliveryIdHeader ?? '',
    teamId: row.teamId,
  };
}
