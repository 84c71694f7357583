import { useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { ErrorNote, Loading, useResource } from '../components';
import { ActionForm, TextField, text, useAction } from '../forms';
import { Link } from '../router';
import type { Factory, Webhook } from '../types';
import { Automations } from './automations';
import { WebhookCreateForm } from './webhook-create-form';

const webhookPath = (w: Webhook) =>
  `/factories/${encodeURIComponent(w.factory_id)}/webhooks/${encodeURIComponent(w.webhook_uid)}`;

/** Enable/disable, secret rotation and delete, for admins (the API refuses others with 403 anyway). */
export function WebhookAdminControls({ webhook, onChanged }: { webhook: Webhook; onChanged: () => void }) {
  const [error, setError] = useState<string>();
  const [secret, setSecret] = useState<string>();
  const toggle = async () => {
    setError(undefined);
    try {
      await api(`${webhookPath(webhook)}/${webhook.enabled ? 'disable' : 'enable'}`, { method: 'POST' });
      onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const rotate = async () => {
    if (!window.confirm(`Rotate the secret of ${webhook.name}? Senders using the old one will be rejected.`))
      return;
    setError(undefined);
    try {
      const rotated = await api<{ secret?: string }>(`${webhookPath(webhook)}/rotate-secret`, {
        method: 'POST',
        body: {},
      });
      setSecret(rotated.secret ?? 'rotated (provider-held secret)');
      onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async () => {
    if (!window.confirm(`Delete ${webhook.name} and its delivery log? Senders get 404 at once.`)) return;
    setError(undefined);
    try {
      await api(webhookPath(webhook), { method: 'DELETE' });
      onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div class="admin-controls">
      <button type="button" onClick={toggle}>
        {webhook.enabled ? 'Disable' : 'Enable'} <span class="visually-hidden">{webhook.name}</span>
      </button>
      <button type="button" onClick={rotate}>
        Rotate secret <span class="visually-hidden">of {webhook.name}</span>
      </button>
      <button type="button" class="danger" onClick={remove}>
        Delete <span class="visually-hidden">{webhook.name}</span>
      </button>
      {secret && (
        <p role="status">
          New secret (shown once): <code>{secret}</code>
        </p>
      )}
      <ErrorNote error={error} />
    </div>
  );
}

function FactoryWebhooks({ factory, isAdmin }: { factory: Factory; isAdmin: boolean }) {
  const { data, error, reload } = useResource<{ webhooks: Webhook[] }>(
    `/factories/${encodeURIComponent(factory.factory_id)}/webhooks`,
  );
  return (
    <section aria-labelledby={`factory-${factory.factory_id}`}>
      <h2 id={`factory-${factory.factory_id}`}>{factory.name}</h2>
      {isAdmin && <WebhookCreateForm factoryId={factory.factory_id} onCreated={reload} />}
      <ErrorNote error={error} />
      {data?.webhooks.length === 0 && <p>No webhooks.</p>}
      <ul class="cards">
        {data?.webhooks.map((w) => (
          <li key={w.webhook_uid} class="card">
            <h3>
              <Link
                href={`/console/webhooks/${encodeURIComponent(w.factory_id)}/webhooks/${encodeURIComponent(w.webhook_uid)}`}
              >
                {w.name}
              </Link>
            </h3>
            <p>
              {w.enabled ? 'Enabled' : 'Disabled'} · {w.auth_mode} · secret {w.secret_status}
            </p>
            <p class="url">
              <code>{w.url}</code>
            </p>
            {isAdmin && <WebhookAdminControls webhook={w} onChanged={reload} />}
          </li>
        ))}
      </ul>
      {data && <Automations factoryId={factory.factory_id} webhooks={data.webhooks} isAdmin={isAdmin} />}
    </section>
  );
}

/** A factory holds webhooks and automations (admins create one; its name is all it has). */
function CreateFactoryForm({ onCreated }: { onCreated: () => void }) {
  const action = useAction();
  const create = async (form: FormData) => {
    const created = await action.run(
      () => api('/factories', { method: 'POST', body: { name: text(form, 'name') } }),
      'Factory created',
    );
    if (created) onCreated();
  };
  return (
    <details class="create">
      <summary>New factory</summary>
      <ActionForm
        id="factory-create"
        resetOnSuccess
        action={action}
        onSubmit={(f) => void create(f)}
        submit="Create factory"
      >
        <TextField name="name" label="Name" />
      </ActionForm>
    </details>
  );
}

export function WebhooksPage({ isAdmin }: { isAdmin: boolean }) {
  const { data, error, reload } = useResource<{ factories: Factory[] }>('/factories');
  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      {isAdmin && <CreateFactoryForm onCreated={reload} />}
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data?.factories.length === 0 && <p>No factories yet.</p>}
      {data?.factories.map((f) => (
        <FactoryWebhooks key={f.factory_id} factory={f} isAdmin={isAdmin} />
      ))}
    </section>
  );
}
