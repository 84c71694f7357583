import type {
  AppliedDefinition__Output,
  Automation__Output,
  Delivery__Output,
  Factory__Output,
  Secret__Output,
  TestFilterResponse__Output,
  Webhook__Output,
  WebhookWithSecret__Output,
} from '@conveyor/proto';

/** gRPC → REST JSON of factories, webhooks, deliveries, automations and secrets (shapes in schemas/webhook-schemas.ts). */

const orNull = (value: string): string | null => (value === '' ? null : value);

function parseJson(value: string): unknown {
  if (!value) return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

export const toFactoryJson = (f: Factory__Output) => ({
  factory_id: f.factory_id,
  name: f.name,
  webhook_count: f.webhook_count,
  automation_count: f.automation_count,
  created_at: f.created_at,
  updated_at: f.updated_at,
});

export const toWebhookJson = (w: Webhook__Output) => ({
  webhook_uid: w.webhook_uid,
  factory_id: w.factory_id,
  name: w.name,
  auth_mode: w.auth_mode,
  signature_scheme: orNull(w.signature_scheme),
  secret_name: w.secret_name,
  delivery_id_header: orNull(w.delivery_id_header),
  enabled: w.enabled,
  url: w.url,
  secret_status: w.secret_status,
  managed_by: w.managed_by,
  created_at: w.created_at,
  updated_at: w.updated_at,
});

/** Creation and rotation: the webhook, plus the generated secret and the sender's URL, shown this once. */
export function toWebhookWithSecretJson(w: WebhookWithSecret__Output) {
  return {
    ...(w.webhook ? toWebhookJson(w.webhook) : {}),
    ...(w.secret ? { secret: w.secret } : {}),
    ingress_url: w.ingress_url,
  };
}

export function toDeliveryJson(d: Delivery__Output, expanded = false) {
  const base = {
    id: d.id,
    delivery_id: d.delivery_id,
    label: d.label,
    size_bytes: d.size_bytes,
    received_at: d.received_at,
    identity_source: d.identity_source,
    reason: orNull(d.reason),
    run_ids: d.run_ids,
    has_payload: d.has_payload,
    processed_at: orNull(d.processed_at),
  };
  if (!expanded) return base;
  return {
    ...base,
    payload: d.has_payload && d.payload.length > 0 ? parseJson(d.payload.toString('utf8')) : null,
    outcome: parseJson(d.outcome_json),
  };
}

export const toTestFilterJson = (r: TestFilterResponse__Output) => ({
  result: r.would_trigger ? 'Would trigger' : 'Would not trigger',
  would_trigger: r.would_trigger,
  webhook_check: { passed: r.webhook_check_passed, detail: r.webhook_check_detail },
  payload_check: {
    passed: r.payload_check_passed,
    detail: r.payload_check_detail,
    mismatches: r.payload_mismatches,
    ...(r.payload_check_error ? { error: r.payload_check_error } : {}),
  },
});

export const toAutomationJson = (a: Automation__Output) => ({
  automation_id: a.automation_id,
  factory_id: a.factory_id,
  name: a.name,
  prompt: a.prompt,
  agent_config: parseJson(a.agent_config_json) ?? {},
  enabled: a.enabled,
  trigger: parseJson(a.trigger_json),
  managed_by: a.managed_by,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

export const toSecretJson = (s: Secret__Output) => ({
  name: s.name,
  created_at: s.created_at,
  updated_at: s.updated_at,
  used_by_webhooks: s.used_by_webhooks,
});

export const toAppliedWebhookJson = (d: AppliedDefinition__Output) => ({
  name: d.name,
  webhook_uid: d.id,
  action: d.action,
  url: d.url,
});
export const toAppliedAutomationJson = (d: AppliedDefinition__Output) => ({
  name: d.name,
  automation_id: d.id,
  action: d.action,
});
export const toAppliedIntegrationJson = (d: AppliedDefinition__Output) => ({
  name: d.name,
  kind: d.kind,
  integration_id: d.id,
  action: d.action,
  url: d.url,
  ...(d.action === 'updated' && { changed: d.changed }),
});
