import { api } from '../api';
import { ErrorNote, Loading, Time, useResource } from '../components';
import { ActionForm, TextField, text, useAction } from '../forms';
import { DataTable } from '../table';
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
      {data && (
        <DataTable
          caption="Secrets"
          rows={data.secrets}
          rowKey={(s) => s.name}
          empty="No secrets yet."
          columns={[
            { header: 'Name', cell: (s) => <code>{s.name}</code> },
            { header: 'Updated', cell: (s) => <Time at={s.updated_at} /> },
            { header: 'Used by webhooks', cell: (s) => s.used_by_webhooks.join(', ') || '—' },
            ...(isAdmin
              ? [
                  {
                    header: 'Delete',
                    cell: (s: Secret) => (
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
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
    </section>
  );
}
