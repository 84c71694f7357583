import { api } from '../api';
import { ErrorNote, Loading, Time, useResource } from '../components';
import { ActionForm, TextField, text, useAction } from '../forms';
import type { Secret } from '../types';

/**
 * The team's managed secrets by name. Values are write-only: the API never returns one, so the console has no way
 * to show it; setting an existing name replaces its value (`PUT`). Admins only (docs/webhooks.md).
 */
export function SecretsPage({ isAdmin }: { isAdmin: boolean }) {
  const { data, error, reload } = useResource<{ secrets: Secret[] }>('/secrets');
  const action = useAction();
  const remove = useAction();
  const save = async (form: FormData) => {
    const name = text(form, 'name');
    const value = String(form.get('value') ?? '');
    const exists = data?.secrets.some((s) => s.name === name);
    const saved = await action.run(
      () =>
        exists
          ? api(`/secrets/${encodeURIComponent(name)}`, { method: 'PUT', body: { value } })
          : api('/secrets', { method: 'POST', body: { name, value } }),
      exists ? `Value of ${name} replaced` : `Secret ${name} created`,
    );
    if (saved) reload();
  };
  return (
    <section aria-labelledby="secrets-h">
      <h1 id="secrets-h">Secrets</h1>
      {isAdmin && (
        <ActionForm
          id="secret-form"
          resetOnSuccess
          action={action}
          onSubmit={(f) => void save(f)}
          submit="Save secret"
        >
          <TextField name="name" label="Name" hint="An existing name gets the new value" />
          <TextField name="value" type="password" label="Value" hint="Write-only: never shown again" />
        </ActionForm>
      )}
      <ErrorNote error={error ?? remove.error} />
      {!data && !error && <Loading />}
      {data?.secrets.length === 0 && <p>No secrets yet.</p>}
      {data && data.secrets.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Secrets</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Updated</th>
                <th scope="col">Used by webhooks</th>
                {isAdmin && <th scope="col">Delete</th>}
              </tr>
            </thead>
            <tbody>
              {data.secrets.map((s) => (
                <tr key={s.name}>
                  <td>
                    <code>{s.name}</code>
                  </td>
                  <td>
                    <Time at={s.updated_at} />
                  </td>
                  <td>{s.used_by_webhooks.join(', ') || '—'}</td>
                  {isAdmin && (
                    <td>
                      <button
                        type="button"
                        class="danger"
                        onClick={() =>
                          void remove
                            .run(
                              () => api(`/secrets/${encodeURIComponent(s.name)}`, { method: 'DELETE' }),
                              'Deleted',
                            )
                            .then(reload)
                        }
                      >
                        Delete <span class="visually-hidden">{s.name}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
