import { useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { ErrorNote, Loading, useResource } from '../components';
import { Link } from '../router';
import type { Factory, Webhook } from '../types';

const webhookPath = (w: Webhook) =>
  `/factories/${encodeURIComponent(w.factory_id)}/webhooks/${encodeURIComponent(w.webhook_uid)}`;

/** Enable/disable and secret rotation, for admins (the API refuses others with 403 anyway). */
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
  return (
    <div class="admin-controls">
      <button type="button" onClick={toggle}>
        {webhook.enabled ? 'Disable' : 'Enable'} <span class="visually-hidden">{webhook.name}</span>
      </button>
      <button type="button" onClick={rotate}>
        Rotate secret <span class="visually-hidden">of {webhook.name}</span>
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
    </section>
  );
}

export function WebhooksPage({ isAdmin }: { isAdmin: boolean }) {
  const { data, error } = useResource<{ factories: Factory[] }>('/factories');
  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data?.factories.length === 0 && <p>No factories yet.</p>}
      {data?.factories.map((f) => (
        <FactoryWebhooks key={f.factory_id} factory={f} isAdmin={isAdmin} />
      ))}
    </section>
  );
}
