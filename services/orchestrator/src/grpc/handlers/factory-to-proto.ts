import type { WebhookDelivery } from '@conveyor/db';
import type { Automation, Delivery, Factory, Secret, Webhook, WebhookWithSecret } from '@conveyor/proto';
import type { AutomationView } from '../../automations/automations';
import type { FactoryView } from '../../factories/factories';
import type { SecretView } from '../../secrets/team-secrets';
import type { WebhookView, WebhookWithSecretView } from '../../webhooks/webhook-view';

const iso = (d: Date | null | undefined): string => (d ? d.toISOString() : '');

export const toFactoryProto = (f: FactoryView): Factory => ({
  factory_id: f.id,
  name: f.name,
  webhook_count: f.webhookCount,
  automation_count: f.automationCount,
  created_at: iso(f.createdAt),
  updated_at: iso(f.updatedAt),
});

export const toWebhookProto = ({ row, url, secretStatus, managedBy }: WebhookView): Webhook => ({
  webhook_uid: row.id,
  factory_id: row.factoryId,
  name: row.name,
  auth_mode: row.authMode,
  signature_scheme: row.signatureScheme ?? '',
  secret_name: row.secretName,
  delivery_id_header: row.deliveryIdHeader ?? '',
  enabled: row.enabled,
  url,
  secret_status: secretStatus,
  managed_by: managedBy,
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});

export const toWebhookWithSecret = (v: WebhookWithSecretView): WebhookWithSecret => ({
  webhook: toWebhookProto(v.webhook),
  secret: v.secret ?? '',
  ingress_url: v.ingressUrl,
});

export const toDeliveryProto = (d: WebhookDelivery, withPayload = false): Delivery => ({
  id: d.id,
  delivery_id: d.deliveryId,
  label: d.label,
  size_bytes: d.sizeBytes,
  received_at: iso(d.receivedAt),
  identity_source: d.identitySource,
  reason: d.reason ?? '',
  run_ids: d.runIds,
  // Listings omit the bytes; only Accepted entries ever keep a payload.
  has_payload: d.payload === undefined ? d.label === 'Accepted' : d.payload !== null,
  ...(withPayload && d.payload ? { payload: Buffer.from(d.payload) } : {}),
  outcome_json: d.outcome === null || d.outcome === undefined ? '' : JSON.stringify(d.outcome),
  processed_at: iso(d.processedAt),
});

export const toAutomationProto = ({ row, managedBy }: AutomationView): Automation => ({
  automation_id: row.id,
  factory_id: row.factoryId,
  name: row.name,
  prompt: row.prompt,
  agent_config_json: JSON.stringify(row.agentConfig ?? {}),
  enabled: row.enabled,
  trigger_json: JSON.stringify(row.trigger),
  managed_by: managedBy,
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});

export const toSecretProto = (s: SecretView): Secret => ({
  name: s.name,
  created_at: iso(s.createdAt),
  updated_at: iso(s.updatedAt),
  used_by_webhooks: s.usedByWebhooks,
});
