import { useState } from 'preact/hooks';
import { api } from '../api';
import { ActionForm, Select, ShownOnce, TextField, text, useAction } from '../forms';
import type { Webhook } from '../types';

const AUTH_MODES: Array<[string, string]> = [
  ['token', 'Token (Authorization: Bearer)'],
  ['url_token', 'Token in the URL'],
  ['signature', 'Signature'],
];

const SCHEMES: Array<[string, string]> = [
  ['', '— (signature mode only)'],
  ...['standard-webhooks', 'stripe', 'github', 'gitlab', 'slack', 'linear', 'shopify'].map(
    (s): [string, string] => [s, s],
  ),
];

/**
 * Creates a webhook in a factory (admins). The answer carries, this once, the generated secret and the ingress URL
 * (docs/webhooks.md "Webhooks"); they live in this component's memory only.
 */
export function WebhookCreateForm({ factoryId, onCreated }: { factoryId: string; onCreated: () => void }) {
  const action = useAction();
  const [created, setCreated] = useState<Webhook & { secret?: string; ingress_url?: string }>();
  const create = async (form: FormData) => {
    const optional = (name: string) => (text(form, name) ? { [name]: text(form, name) } : {});
    const result = await action.run(
      () =>
        api<Webhook & { secret?: string; ingress_url?: string }>(
          `/factories/${encodeURIComponent(factoryId)}/webhooks`,
          {
            method: 'POST',
            body: {
              name: text(form, 'name'),
              auth_mode: text(form, 'auth_mode'),
              ...optional('signature_scheme'),
              ...optional('provider_secret'),
              ...optional('secret_name'),
              ...optional('delivery_id_header'),
            },
          },
        ),
      'Webhook created',
    );
    setCreated(result);
    if (result) onCreated();
  };
  return (
    <details class="create">
      <summary>New webhook</summary>
      <ActionForm
        id={`webhook-create-${factoryId}`}
        resetOnSuccess
        action={action}
        onSubmit={(f) => void create(f)}
        submit="Create webhook"
      >
        <TextField name="name" label="Name" />
        <Select name="auth_mode" label="Authentication" options={AUTH_MODES} value="token" />
        <Select name="signature_scheme" label="Signature scheme" options={SCHEMES} />
        <TextField
          name="provider_secret"
          type="password"
          label="Provider's signing secret"
          hint="Signature mode: the secret the provider issued (write-only). Leave empty to set it after the provider has seen the URL"
        />
        <TextField
          name="secret_name"
          label="Team secret name"
          hint="Default WEBHOOK_<NAME>_SECRET; naming an existing secret reuses its value"
        />
        <TextField
          name="delivery_id_header"
          label="Delivery ID header"
          hint="Optional: the sender's header holding its delivery ID (used to drop duplicates)"
        />
      </ActionForm>
      {created && (
        <>
          <ShownOnce label={`Ingress URL of ${created.name}`} value={created.ingress_url} />
          <ShownOnce label={`Secret of ${created.name}`} value={created.secret} />
        </>
      )}
    </details>
  );
}
