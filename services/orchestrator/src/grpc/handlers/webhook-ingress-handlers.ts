import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { WebhookIngressServiceHandlers } from '@conveyor/proto';
import type { SecretCipher } from '../../secrets/secret-cipher';
import { unary } from '../unary-handler';
import { resolveWebhookForIngress } from '../../webhooks/resolve-webhook-for-ingress';

/** WebhookIngressService: the ingress's configuration lookups (no caller: an internal, trusted link). */
export function webhookIngressHandlers(deps: {
  db: PrismaClient;
  cipher: SecretCipher;
  logger: Logger;
}): WebhookIngressServiceHandlers {
  return {
    ResolveWebhook: unary(deps.logger, 'ResolveWebhook', async (req) => {
      const resolved = await resolveWebhookForIngress(deps, req.webhook_uid);
      return {
        found: resolved.found,
        enabled: resolved.enabled,
        auth_mode: resolved.authMode,
        signature_scheme: resolved.signatureScheme,
        secret: resolved.secret,
        awaiting_secret: resolved.awaitingSecret,
        delivery_id_header: resolved.deliveryIdHeader,
        team_id: resolved.teamId,
      };
    }),
  };
}
