import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Loading, StateBadge, Time, useResource } from '../components';
import { ActionForm, Checkbox, TextArea, TextField, lines, text, useAction } from '../forms';
import { Link } from '../router';
import type { Environment, EnvironmentList, Guests, Session } from '../types';

const envPath = (uid: string) => `/agent/environments/${encodeURIComponent(uid)}`;

/** The form's fields as the API's body: one repository URL, setup command or host per line; `PUT` replaces lists. */
function environmentBody(form: FormData) {
  return {
    name: text(form, 'name'),
    description: text(form, 'description') || null,
    repositories: lines(form, 'repositories').map((url) => ({ url })),
    setup_commands: lines(form, 'setup_commands'),
    allowed_hosts: lines(form, 'allowed_hosts'),
    snapshot: form.get('snapshot') === 'on',
  };
}

/** Create (no `environment`) or edit one environment. */
function EnvironmentForm({ environment, onSaved }: { environment?: Environment; onSaved: () => void }) {
  const action = useAction();
  const c = environment?.config;
  const id = environment ? `env-edit-${environment.uid}` : 'env-create';
  const save = async (form: FormData) => {
    const saved = await action.run(
      () =>
        environment
          ? api(envPath(environment.uid), { method: 'PUT', body: environmentBody(form) })
          : api('/agent/environments', { method: 'POST', body: environmentBody(form) }),
      environment ? 'Saved' : 'Environment created',
    );
    if (saved) onSaved();
  };
  return (
    <ActionForm
      id={id}
      resetOnSuccess={!environment}
      action={action}
      onSubmit={(f) => void save(f)}
      submit={environment ? 'Save' : 'Create'}
    >
      <TextField name="name" label="Name" value={c?.name} required />
      <TextField name="description" label="Description" value={c?.description ?? ''} />
      <TextArea
        name="repositories"
        label="Repositories"
        hint="One git URL per line"
        value={(c?.repositories ?? []).map((r) => r.url).join('\n')}
      />
      <TextArea
        name="setup_commands"
        label="Setup commands"
        hint="One command per line, run in order"
        value={(c?.setup_commands ?? []).join('\n')}
      />
      <TextArea
        name="allowed_hosts"
        label="Allowed hosts"
        hint="Egress hosts for its runs, one per line: a name or *.domain"
        value={(c?.allowed_hosts ?? []).join('\n')}
      />
      <Checkbox
        name="snapshot"
        label="Snapshot after setup (later runs start from it)"
        checked={c?.snapshot !== false}
      />
    </ActionForm>
  );
}

/** Guests of one environment: invite by e-mail (202 whatever the address), list, remove (docs/guests.md). */
function GuestsPanel({ uid }: { uid: string }) {
  const guests = useResource<Guests>(`${envPath(uid)}/guests`);
  const invite = useAction();
  const remove = useAction();
  const send = async (form: FormData) => {
    if (
      (await invite.run(
        () => api(`${envPath(uid)}/guests`, { method: 'POST', body: { email: text(form, 'email') } }),
        'Invitation sent',
      )) !== undefined
    )
      guests.reload();
  };
  return (
    <section aria-label="Guests" class="guests">
      <h3>Guests</h3>
      <ErrorNote error={guests.error ?? remove.error} />
      <ul>
        {guests.data?.guests.map((g) => (
          <li key={g.user_id}>
            {g.email}{' '}
            <button
              type="button"
              class="danger"
              onClick={() =>
                void remove
                  .run(
                    () =>
                      api(`${envPath(uid)}/guests/${encodeURIComponent(g.user_id)}`, { method: 'DELETE' }),
                    'Removed',
                  )
                  .then(guests.reload)
              }
            >
              Remove <span class="visually-hidden">{g.email}</span>
            </button>
          </li>
        ))}
        {guests.data?.invitations.map((i) => (
          <li key={i.invitation_id}>
            {i.email} <span class="tag">invited</span>
          </li>
        ))}
      </ul>
      <ActionForm
        id={`guest-${uid}`}
        resetOnSuccess
        action={invite}
        onSubmit={(f) => void send(f)}
        submit="Invite guest"
      >
        <TextField name="email" type="email" label="Guest's e-mail" />
      </ActionForm>
    </section>
  );
}

const SNAPSHOT_WORDS = {
  none: 'none yet',
  building: 'being made',
  ready: 'ready',
  failed: 'could not be made',
} as const;

/** The team's snapshot: its state, ID, when a run last reported it, and that run. */
function SnapshotStatus({ snapshot }: { snapshot: Environment['snapshot'] }) {
  if (!snapshot || snapshot.state === 'none') return <>{SNAPSHOT_WORDS.none}</>;
  return (
    <>
      <span class={`badge snapshot-${snapshot.state}`}>{SNAPSHOT_WORDS[snapshot.state]}</span>
      {snapshot.snapshot_id && (
        <>
          {' '}
          <code>{snapshot.snapshot_id}</code>
        </>
      )}{' '}
      · <Time at={snapshot.updated_at} />
      {snapshot.run_id && (
        <>
          {' '}
          · <Link href={`/console/runs/${encodeURIComponent(snapshot.run_id)}`}>run</Link>
        </>
      )}
    </>
  );
}

function EnvironmentCard({
  env,
  canManage,
  onChanged,
}: {
  env: Environment;
  canManage: boolean;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const c = env.config;
  return (
    <li class="card environment">
      <h2>{c.name ?? env.uid}</h2>
      <p>
        <code>{env.uid}</code> · {env.access ?? 'team'} · updated <Time at={env.last_updated} />
      </p>
      {c.description && <p>{c.description}</p>}
      <dl class="facts">
        <dt>Repositories</dt>
        <dd>{(c.repositories ?? []).map((r) => r.url).join(', ') || '—'}</dd>
        <dt>Setup</dt>
        <dd>
          {(c.setup_commands ?? []).length} command(s)
          {env.setup_failed && <span class="reason"> — last setup failed</span>}
        </dd>
        <dt>Allowed hosts</dt>
        <dd>{(c.allowed_hosts ?? []).join(', ') || '—'}</dd>
        <dt>Snapshots</dt>
        <dd class="snapshot-state">{c.snapshot === false ? 'off' : 'on'}</dd>
        {c.snapshot !== false && (
          <>
            <dt>Snapshot</dt>
            <dd class="snapshot-status">
              <SnapshotStatus snapshot={env.snapshot} />
            </dd>
          </>
        )}
        <dt>Last run</dt>
        <dd>
          {env.last_task_created ? (
            <Link href={`/console/runs/${encodeURIComponent(env.last_task_created.id)}`}>
              <StateBadge state={env.last_task_created.state} /> {env.last_task_created.title}
            </Link>
          ) : (
            '—'
          )}
        </dd>
      </dl>
      {canManage && (
        <>
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            {editing ? 'Close' : 'Edit'} <span class="visually-hidden">{c.name}</span>
          </button>
          {editing && (
            <EnvironmentForm
              environment={env}
              onSaved={() => {
                setEditing(false);
                onChanged();
              }}
            />
          )}
          <GuestsPanel uid={env.uid} />
        </>
      )}
    </li>
  );
}

/**
 * The environments the caller can reach; anyone may create one, and its admin or creator may edit it and manage
 * its guests (docs/catalog.md). The API decides either way; the buttons only follow its rule.
 */
export function EnvironmentsPage({ session }: { session: Session }) {
  const { data, error, reload } = useResource<EnvironmentList>('/agent/environments');
  return (
    <section aria-labelledby="env-h">
      <h1 id="env-h">Environments</h1>
      <details class="create">
        <summary>New environment</summary>
        <EnvironmentForm onSaved={reload} />
      </details>
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data?.environments.length === 0 && <p>No environments yet.</p>}
      <ul class="cards">
        {data?.environments.map((env) => (
          <EnvironmentCard
            key={env.uid}
            env={env}
            canManage={session.role === 'ADMIN' || env.creator?.uid === session.principal_id}
            onChanged={reload}
          />
        ))}
      </ul>
    </section>
  );
}
