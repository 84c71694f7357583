import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Loading, Time, useResource } from '../components';
import { ActionForm, ShownOnce, TextField, text, useAction } from '../forms';
import type { AgentIdentity, AgentKey } from '../types';

const identityPath = (uid: string) => `/agent/identities/${encodeURIComponent(uid)}`;

/** One identity's API keys: create (the key is shown once), list by prefix, revoke (docs/identities.md). */
function KeysPanel({ uid }: { uid: string }) {
  const keys = useResource<{ api_keys: AgentKey[] }>(`${identityPath(uid)}/api-keys`);
  const create = useAction();
  const revoke = useAction();
  const [created, setCreated] = useState<string>();
  const add = async (form: FormData) => {
    const key = await create.run(
      () =>
        api<AgentKey>(`${identityPath(uid)}/api-keys`, {
          method: 'POST',
          body: text(form, 'name') ? { name: text(form, 'name') } : {},
        }),
      'Key created',
    );
    setCreated(key?.key);
    if (key) keys.reload();
  };
  return (
    <section aria-label="API keys" class="keys">
      <h3>API keys</h3>
      <ErrorNote error={keys.error ?? revoke.error} />
      <ul>
        {keys.data?.api_keys.map((k) => (
          <li key={k.id}>
            <code>{k.prefix}…</code> {k.name}{' '}
            {k.revoked_at ? (
              <span class="tag">revoked</span>
            ) : (
              <button
                type="button"
                class="danger"
                onClick={() =>
                  void revoke
                    .run(
                      () =>
                        api(`${identityPath(uid)}/api-keys/${encodeURIComponent(k.id)}`, {
                          method: 'DELETE',
                        }),
                      'Revoked',
                    )
                    .then(keys.reload)
                }
              >
                Revoke <span class="visually-hidden">{k.prefix}</span>
              </button>
            )}
          </li>
        ))}
      </ul>
      <ActionForm
        id={`key-${uid}`}
        resetOnSuccess
        action={create}
        onSubmit={(f) => void add(f)}
        submit="Create key"
      >
        <TextField name="name" label="Key name" />
      </ActionForm>
      <ShownOnce label="New API key" value={created} />
    </section>
  );
}

/** Agent identities of the team; creating them and managing their keys is for admins (the API says 403 to others). */
export function IdentitiesPage({ isAdmin }: { isAdmin: boolean }) {
  const { data, error, reload } = useResource<{ agents: AgentIdentity[] }>('/agent/identities');
  const create = useAction();
  const add = async (form: FormData) => {
    const made = await create.run(
      () =>
        api('/agent/identities', {
          method: 'POST',
          body: { name: text(form, 'name'), description: text(form, 'description') || null },
        }),
      'Identity created',
    );
    if (made) reload();
  };
  return (
    <section aria-labelledby="identities-h">
      <h1 id="identities-h">Agent identities</h1>
      {isAdmin && (
        <details class="create">
          <summary>New agent identity</summary>
          <ActionForm
            id="identity-create"
            resetOnSuccess
            action={create}
            onSubmit={(f) => void add(f)}
            submit="Create identity"
          >
            <TextField name="name" label="Name" />
            <TextField name="description" label="Description" />
          </ActionForm>
        </details>
      )}
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data?.agents.length === 0 && <p>No agent identities yet.</p>}
      <ul class="cards">
        {data?.agents.map((a) => (
          <li key={a.uid} class="card identity">
            <h2>{a.name}</h2>
            <p>
              <code>{a.uid}</code> · created <Time at={a.created_at} />
            </p>
            {a.description && <p>{a.description}</p>}
            {isAdmin && <KeysPanel uid={a.uid} />}
          </li>
        ))}
      </ul>
    </section>
  );
}
