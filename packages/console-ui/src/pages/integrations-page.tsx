import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Loading, Time, useResource } from '../components';
import { EnvironmentSelect } from '../environment-select';
import { ActionForm, Select, TextArea, TextField, lines, text, useAction } from '../forms';
import { DataTable } from '../table';
import type { Factory, Integration } from '../types';

/** What differs between the three integrations: their path, their listing's key and ID, what they register with. */
interface Kind {
  slug: string;
  title: string;
  path: string;
  listKey: string;
  idKey: string;
  /** Who may list them: Slack apps name a workspace's channels and people, so only admins (docs/integrations.md). */
  adminOnlyList: boolean;
  /** The provider's own fields; the shared ones (name, factory, environment) are added around them. */
  fields: () => ComponentChildren;
  body: (form: FormData) => Record<string, unknown>;
}

const optional = (form: FormData, name: string) => (text(form, name) ? { [name]: text(form, name) } : {});
const optionalList = (form: FormData, name: string) =>
  lines(form, name).length > 0 ? { [name]: lines(form, name) } : {};

/** What a GitHub App does, whether its credentials are pasted or GitHub issues them (the manifest flow). */
function GitHubAppSettings() {
  return (
    <>
      <TextField name="trigger_label" label="Trigger label" hint="Optional: a label that starts a run" />
      <TextArea name="repositories" label="Repositories" hint="owner/repo, one per line (default: all)" />
      <TextArea name="allowed_users" label="Allowed users" hint="GitHub logins, one per line (optional)" />
    </>
  );
}
const githubAppSettings = (form: FormData) => ({
  ...optional(form, 'trigger_label'),
  ...optionalList(form, 'repositories'),
  ...optionalList(form, 'allowed_users'),
});

const KINDS: Kind[] = [
  {
    slug: 'github',
    title: 'GitHub Apps',
    path: '/integrations/github-apps',
    listKey: 'github_apps',
    idKey: 'github_app_id',
    adminOnlyList: false,
    fields: () => (
      <>
        <TextField name="app_id" label="App ID" />
        <TextArea name="private_key" label="Private key (PEM)" rows={4} hint="Write-only: stored encrypted" />
        <TextField
          name="webhook_secret"
          type="password"
          label="Webhook secret"
          hint="The secret set on the App"
        />
        <GitHubAppSettings />
      </>
    ),
    body: (form) => ({
      app_id: text(form, 'app_id'),
      private_key: String(form.get('private_key') ?? ''),
      webhook_secret: String(form.get('webhook_secret') ?? ''),
      ...githubAppSettings(form),
    }),
  },
  {
    slug: 'slack',
    title: 'Slack apps',
    path: '/integrations/slack-apps',
    listKey: 'slack_apps',
    idKey: 'slack_app_id',
    adminOnlyList: true,
    fields: () => (
      <>
        <TextField
          name="bot_token"
          type="password"
          label="Bot token"
          hint="xoxb-…; checked with Slack, write-only"
        />
        <TextField
          name="signing_secret"
          type="password"
          label="Signing secret"
          hint="Basic Information → Signing Secret"
        />
        <TextArea
          name="allowed_channels"
          label="Allowed channels"
          hint="Channel IDs, one per line (default: every channel)"
        />
        <TextArea
          name="allowed_users"
          label="Allowed users"
          hint="Slack user IDs, one per line (default: everyone)"
        />
      </>
    ),
    body: (form) => ({
      bot_token: String(form.get('bot_token') ?? ''),
      signing_secret: String(form.get('signing_secret') ?? ''),
      ...optionalList(form, 'allowed_channels'),
      ...optionalList(form, 'allowed_users'),
    }),
  },
  {
    slug: 'linear',
    title: 'Linear',
    path: '/integrations/linear',
    listKey: 'linear_integrations',
    idKey: 'linear_integration_id',
    adminOnlyList: false,
    fields: () => (
      <>
        <TextField
          name="api_key"
          type="password"
          label="API key"
          hint="The agent user's key; checked with Linear, write-only"
        />
        <TextField name="webhook_secret" type="password" label="Webhook signing secret" />
        <TextField name="agent_user_id" label="Agent user ID" hint="Optional (default: the key's own user)" />
        <TextField name="trigger_label" label="Trigger label" hint="Optional: a label that starts a run" />
        <TextField
          name="pr_opened_state_id"
          label="State when a PR opens"
          hint="Optional workflow state ID"
        />
        <TextField
          name="run_ended_state_id"
          label="State when the run ends"
          hint="Optional workflow state ID"
        />
      </>
    ),
    body: (form) => ({
      api_key: String(form.get('api_key') ?? ''),
      webhook_secret: String(form.get('webhook_secret') ?? ''),
      ...optional(form, 'agent_user_id'),
      ...optional(form, 'trigger_label'),
      ...optional(form, 'pr_opened_state_id'),
      ...optional(form, 'run_ended_state_id'),
    }),
  },
];

type Registered = Integration & Record<string, unknown>;

/** Every integration's name, the factory whose webhook receives its deliveries, and its runs' environment. */
function SharedFields() {
  const factories = useResource<{ factories: Factory[] }>('/factories');
  return (
    <>
      <TextField name="name" label="Name" />
      <Select
        name="factory_id"
        label="Factory"
        hint="Its webhook receives the provider's deliveries"
        options={[
          ['', 'Choose a factory'],
          ...(factories.data?.factories ?? []).map((f): [string, string] => [f.factory_id, f.name]),
        ]}
      />
      <EnvironmentSelect none="The team's default" />
    </>
  );
}

interface ManifestStart {
  post_url: string;
  manifest: Record<string, unknown>;
}

/**
 * GitHub's manifest flow (admins): the API keeps the registration pending and answers the manifest, then the browser
 * posts it to GitHub, where the user confirms; GitHub comes back to the API, which registers the App with the key and
 * webhook secret GitHub issued and returns here with `?github_app=<id>`. Nothing is pasted.
 */
function CreateOnGitHubForm() {
  const action = useAction();
  const [started, setStarted] = useState<ManifestStart>();
  const toGitHub = useRef<HTMLFormElement>(null);
  useEffect(() => toGitHub.current?.submit(), [started]);
  const start = async (form: FormData) => {
    const result = await action.run(
      () =>
        api<ManifestStart>('/integrations/github-apps/manifest', {
          method: 'POST',
          body: {
            name: text(form, 'name'),
            factory_id: text(form, 'factory_id'),
            ...optional(form, 'environment_id'),
            ...optional(form, 'organization'),
            ...githubAppSettings(form),
          },
        }),
      'Continuing on GitHub',
    );
    setStarted(result);
  };
  return (
    <details class="create">
      <summary>Create on GitHub</summary>
      <ActionForm
        id="create-github-app"
        action={action}
        onSubmit={(f) => void start(f)}
        submit="Create on GitHub"
      >
        <SharedFields />
        <TextField
          name="organization"
          label="Organization"
          hint="Optional: the GitHub organization that owns the App (default: you)"
        />
        <GitHubAppSettings />
      </ActionForm>
      {started && (
        <form ref={toGitHub} method="post" action={started.post_url}>
          <input type="hidden" name="manifest" value={JSON.stringify(started.manifest)} />
          <button type="submit">Continue on GitHub</button>
        </form>
      )}
    </details>
  );
}

/** Registers one (admins): the API checks the credentials with the provider first, its 400 lands at the field. */
function RegisterForm({ kind, onCreated }: { kind: Kind; onCreated: () => void }) {
  const action = useAction();
  const [created, setCreated] = useState<Registered>();
  const register = async (form: FormData) => {
    const result = await action.run(
      () =>
        api<Registered>(kind.path, {
          method: 'POST',
          body: {
            name: text(form, 'name'),
            factory_id: text(form, 'factory_id'),
            ...optional(form, 'environment_id'),
            ...kind.body(form),
          },
        }),
      'Registered',
    );
    setCreated(result);
    if (result) onCreated();
  };
  return (
    <details class="create">
      <summary>Register</summary>
      <ActionForm
        id={`register-${kind.slug}`}
        resetOnSuccess
        action={action}
        onSubmit={(f) => void register(f)}
        submit="Register"
      >
        <SharedFields />
        {kind.fields()}
      </ActionForm>
      {created && (
        <p role="status">
          Registered {created.name}. Set its webhook URL at the provider: <code>{created.webhook_url}</code>
        </p>
      )}
    </details>
  );
}

function IntegrationSection({ kind, isAdmin }: { kind: Kind; isAdmin: boolean }) {
  const listed = !kind.adminOnlyList || isAdmin;
  const { data, error, reload } = useResource<Record<string, Registered[]>>(listed ? kind.path : null);
  const remove = useAction();
  const del = async (item: Registered) => {
    if (!window.confirm(`Remove ${item.name}? Its webhook goes with it.`)) return;
    const path = `${kind.path}/${encodeURIComponent(String(item[kind.idKey]))}`;
    if (await remove.run(() => api(path, { method: 'DELETE' }).then(() => true), 'Removed')) reload();
  };
  const rows = data?.[kind.listKey];
  return (
    <section aria-labelledby={`integrations-${kind.slug}`}>
      <h2 id={`integrations-${kind.slug}`}>{kind.title}</h2>
      {isAdmin && kind.slug === 'github' && <CreateOnGitHubForm />}
      {isAdmin && <RegisterForm kind={kind} onCreated={reload} />}
      {!listed && <p>Only the team's admins see its {kind.title}.</p>}
      <ErrorNote error={error ?? remove.error} />
      {listed && !rows && !error && <Loading />}
      {rows && (
        <DataTable
          caption={kind.title}
          rows={rows}
          rowKey={(r) => String(r[kind.idKey])}
          empty="None registered."
          columns={[
            { header: 'Name', cell: (r) => r.name },
            {
              header: 'Status',
              cell: (r) => (
                <>
                  <span class={`badge badge-${r.status}`}>{r.status}</span>
                  {r.broken_reason && <span class="reason"> — {r.broken_reason}</span>}
                </>
              ),
            },
            { header: 'Webhook URL', cell: (r) => <code class="url">{r.webhook_url}</code> },
            { header: 'Registered', cell: (r) => <Time at={r.created_at} />, secondary: true },
            ...(isAdmin
              ? [
                  {
                    header: 'Remove',
                    cell: (r: Registered) => (
                      <button type="button" class="danger" onClick={() => void del(r)} disabled={remove.busy}>
                        Remove <span class="visually-hidden">{r.name}</span>
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

/** GitHub Apps, Slack apps and Linear (docs/integrations.md): status with the provider's reason when broken. */
export function IntegrationsPage({ isAdmin }: { isAdmin: boolean }) {
  // GitHub's manifest flow ends here (the API's callback redirects with the App's ID).
  const createdOnGitHub = new URLSearchParams(window.location.search).get('github_app');
  return (
    <section aria-labelledby="integrations-h">
      <h1 id="integrations-h">Integrations</h1>
      {createdOnGitHub && (
        <p role="status">
          The GitHub App was created on GitHub and registered ({createdOnGitHub}). Install it on its
          repositories on GitHub.
        </p>
      )}
      {KINDS.map((k) => (
        <IntegrationSection key={k.slug} kind={k} isAdmin={isAdmin} />
      ))}
    </section>
  );
}
