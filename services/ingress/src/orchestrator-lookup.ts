import { callRpc, type OrchestratorClients } from '@conveyor/proto';
import type { WebhookLookup } from './webhook-resolver';

/** Resolves a webhook through the orchestrator (the ingress never reads the database). */
export function orchestratorWebhookLookup(clients: OrchestratorClients, deadlineMs: number): WebhookLookup {
  return async (uid) => {
    const res = await callRpc(
      clients,
      'webhookIngress',
      'ResolveWebhook',
      { webhook_uid: uid },
      { deadlineMs },
    );
    return {
      uid,
      found: res.found,
      enabled: res.enabled,
      authMode: res.auth_mode,
      signatureScheme: res.signature_scheme,
      secret: res.secret,
      awaitingSecret: res.awaiting_secret,
      deliveryIdHeader: res.delivery_id_header,
      teamId: res.team_id,
    };
  };
}
