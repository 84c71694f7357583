import { ErrorNote, Loading, Time, useResource } from '../components';
import { DataTable } from '../table';
import type { Worker } from '../types';

/*
 * The API lists only live connections (a heartbeat within WORKER_STALE_AFTER_MS, docs/workers.md), so a listed
 * worker is up; what remains to tell is whether it can take another run and how long ago it last spoke.
 */
const health = (w: Worker): string => (w.active_runs >= w.capacity ? 'full' : 'healthy');
const secondsAgo = (iso: string, now: number) =>
  `${Math.max(0, Math.round((now - Date.parse(iso)) / 1000))} s ago`;

/** Self-hosted workers connected now, with capacity, load and heartbeat (`GET /agent/connected-self-hosted-workers`). */
export function WorkersPage() {
  const { data, error, reload } = useResource<{ workers: Worker[] }>('/agent/connected-self-hosted-workers');
  const now = Date.now();
  return (
    <section aria-labelledby="workers-h">
      <h1 id="workers-h">Self-hosted workers</h1>
      <button type="button" onClick={reload}>
        Refresh
      </button>
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data && (
        <DataTable
          caption="Workers"
          rows={data.workers}
          rowKey={(w) => w.connection_id}
          empty="No self-hosted workers are connected."
          columns={[
            { header: 'Worker', cell: (w) => <code>{w.worker_id}</code> },
            {
              header: 'Health',
              cell: (w) => <span class={`badge health-${health(w)}`}>{health(w)}</span>,
            },
            { header: 'Runs / capacity', cell: (w) => `${w.active_runs} / ${w.capacity}` },
            {
              header: 'Last heartbeat',
              cell: (w) => (
                <>
                  <Time at={w.last_heartbeat_at} /> ({secondsAgo(w.last_heartbeat_at, now)})
                </>
              ),
            },
            {
              header: 'Host, version',
              cell: (w) => `${w.hostname ?? '—'} ${w.version ?? ''}`,
              secondary: true,
            },
            { header: 'Connected', cell: (w) => <Time at={w.connected_at} />, secondary: true },
          ]}
        />
      )}
    </section>
  );
}
