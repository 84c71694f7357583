import { useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { ErrorNote, Loading, Time, useResource } from '../components';
import { ActionForm, Checkbox, ShownOnce, TextField, text, useAction } from '../forms';
import { Link } from '../router';
import { DataTable } from '../table';
import type { EventAttempt, EventEndpoint } from '../types';

const endpointPath = (id: string) => `/event-endpoints/${encodeURIComponent(id)}`;

function EndpointSummary({ endpoint }: { endpoint: EventEndpoint }) {
  return (
    <>
      <p class="url">
        <code>{endpoint.url}</code>
      </p>
      <p>
        {endpoint.enabled ? 'Enabled' : 'Disabled'} · {endpoint.event_types.join(', ')}
        {endpoint.disabled_reason && <span class="reason"> — {endpoint.disabled_reason}</span>}
      </p>
    </>
  );
}

const EVENT_TYPES = [
  '*',
  'run.queued',
  'run.inprogress',
  'run.succeeded',
  'run.failed',
  'run.error',
  'run.cancelled',
  'run.blocked',
  'run.artifact_reported',
];

/** Adds an endpoint (admins); its signing secret is in this one response and nowhere else. */
function CreateEndpointForm({ onCreated }: { onCreated: () => void }) {
  const action = useAction();
  const [secret, setSecret] = useState<string>();
  const create = async (form: FormData) => {
    const created = await action.run(
      () =>
        api<EventEndpoint & { secret: string }>('/event-endpoints', {
          method: 'POST',
          body: {
            url: text(form, 'url'),
            event_types: form.getAll('event_types').map(String),
            ...(text(form, 'description') && { description: text(form, 'description') }),
          },
        }),
      'Endpoint created',
    );
    setSecret(created?.secret);
    if (created) onCreated();
  };
  return (
    <details class="create">
      <summary>New event endpoint</summary>
      <ActionForm
        id="endpoint-create"
        resetOnSuccess
        action={action}
        onSubmit={(f) => void create(f)}
        submit="Create endpoint"
      >
        <TextField name="url" type="url" label="URL" hint="https (http only for hosts the operator allows)" />
        <TextField name="description" label="Description" />
        <fieldset class="event-types">
          <legend>Event types</legend>
          {EVENT_TYPES.map((t) => (
            <Checkbox
              key={t}
              name="event_types"
              value={t}
              checked={t === '*'}
              label={t === '*' ? 'every type (*)' : t}
            />
          ))}
        </fieldset>
      </ActionForm>
      <ShownOnce label="Signing secret" value={secret} />
    </details>
  );
}

/** A new signing secret (admins); the old one keeps signing until `previous_secret_expires_at`. */
function RotateSecret({ endpointId, onDone }: { endpointId: string; onDone: () => void }) {
  const action = useAction();
  const [rotated, setRotated] = useState<
    EventEndpoint & { secret: string; previous_secret_expires_at: string | null }
  >();
  const rotate = async () => {
    const result = await action.run(
      () => api<typeof rotated>(`${endpointPath(endpointId)}/rotate-secret`, { method: 'POST' }),
      'Secret rotated',
    );
    setRotated(result);
    if (result) onDone();
  };
  return (
    <div class="admin-controls">
      <button type="button" onClick={() => void rotate()} disabled={action.busy}>
        Rotate secret
      </button>
      <span role="status">{action.notice}</span>
      <ErrorNote error={action.error} />
      <ShownOnce label="New signing secret" value={rotated?.secret} />
      {rotated?.previous_secret_expires_at && (
        <p>
          The previous secret signs alongside it until <Time at={rotated.previous_secret_expires_at} />.
        </p>
      )}
    </div>
  );
}

/** The team's event endpoints (docs/events.md), each linking to its attempts. */
export function EventEndpointsPage({ isAdmin }: { isAdmin: boolean }) {
  const { data, error, reload } = useResource<{ endpoints: EventEndpoint[] }>('/event-endpoints');
  return (
    <section aria-labelledby="events-h">
      <h1 id="events-h">Event endpoints</h1>
      {isAdmin && <CreateEndpointForm onCreated={reload} />}
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data?.endpoints.length === 0 && <p>No event endpoints yet.</p>}
      <ul class="cards">
        {data?.endpoints.map((e) => (
          <li key={e.endpoint_id} class="card">
            <h2>
              <Link href={`/console/events/${encodeURIComponent(e.endpoint_id)}`}>
                {e.description || e.endpoint_id}
              </Link>
            </h2>
            <EndpointSummary endpoint={e} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Replays one event (same webhook-id, same body) through the API; admins only, the API refuses others anyway. */
function ReplayButton({
  endpointId,
  attempt,
  onDone,
}: {
  endpointId: string;
  attempt: EventAttempt;
  onDone: () => void;
}) {
  const [state, setState] = useState<{ busy?: boolean; done?: boolean; error?: string }>({});
  const replay = async () => {
    setState({ busy: true });
    try {
      await api(`${endpointPath(endpointId)}/events/${encodeURIComponent(attempt.event_id)}/replay`, {
        method: 'POST',
      });
      setState({ done: true });
      onDone();
    } catch (err) {
      setState({ error: errorText(err) });
    }
  };
  return (
    <>
      <button type="button" onClick={replay} disabled={state.busy}>
        Replay <span class="visually-hidden">{attempt.event_id}</span>
      </button>
      {state.done && <span role="status"> Queued</span>}
      <ErrorNote error={state.error} />
    </>
  );
}

/** One endpoint's delivery attempts (event, type, status code, latency, error, next retry) with a replay button. */
export function EventEndpointPage({ endpointId, isAdmin }: { endpointId: string; isAdmin: boolean }) {
  const endpoint = useResource<EventEndpoint>(endpointPath(endpointId));
  const attempts = useResource<{ attempts: EventAttempt[] }>(
    `${endpointPath(endpointId)}/attempts?limit=100`,
  );
  return (
    <section aria-labelledby="attempts-h">
      <p>
        <Link href="/console/events">← Event endpoints</Link>
      </p>
      <h1 id="attempts-h">Attempts{endpoint.data ? `: ${endpoint.data.description || endpointId}` : ''}</h1>
      <ErrorNote error={endpoint.error ?? attempts.error} />
      {endpoint.data && <EndpointSummary endpoint={endpoint.data} />}
      {isAdmin && <RotateSecret endpointId={endpointId} onDone={endpoint.reload} />}
      {!attempts.data && !attempts.error && <Loading />}
      {attempts.data && (
        <>
          <button type="button" onClick={attempts.reload}>
            Refresh
          </button>
          <DataTable
            caption="Attempts"
            rows={attempts.data.attempts}
            rowKey={(a, i) => `${a.event_id}-${a.attempted_at}-${i}`}
            empty="No attempts yet."
            columns={[
              { header: 'Attempted', cell: (a) => <Time at={a.attempted_at} /> },
              {
                header: 'Event',
                cell: (a) => (
                  <>
                    <code>{a.event_id}</code>{' '}
                    <Link href={`/console/runs/${encodeURIComponent(a.run_id)}`} class="run-link">
                      run {a.run_id.slice(0, 8)}
                    </Link>
                  </>
                ),
              },
              { header: 'Type', cell: (a) => a.event_type },
              { header: 'Status', cell: (a) => a.status_code ?? '—' },
              { header: 'Latency', cell: (a) => `${a.latency_ms} ms` },
              { header: 'Error', cell: (a) => a.error ?? '—' },
              { header: 'Next retry', cell: (a) => <Time at={a.next_attempt_at} /> },
              ...(isAdmin
                ? [
                    {
                      header: 'Replay',
                      cell: (a: EventAttempt) => (
                        <ReplayButton endpointId={endpointId} attempt={a} onDone={attempts.reload} />
                      ),
                    },
                  ]
                : []),
            ]}
          />
        </>
      )}
    </section>
  );
}
