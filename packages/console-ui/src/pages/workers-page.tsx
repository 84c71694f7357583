import { ErrorNote, Loading, Time, useResource } from '../components';
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
      {data?.workers.length === 0 && <p>No self-hosted workers are connected.</p>}
      {data && data.workers.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Workers</caption>
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Health</th>
                <th scope="col">Runs / capacity</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col" class="wide-only">
                  Host, version
                </th>
                <th scope="col" class="wide-only">
                  Connected
                </th>
              </tr>
            </thead>
            <tbody>
              {data.workers.map((w) => (
                <tr key={w.connection_id}>
                  <td>
                    <code>{w.worker_id}</code>
                  </td>
                  <td>
                    <span class={`badge health-${health(w)}`}>{health(w)}</span>
                  </td>
                  <td>
                    {w.active_runs} / {w.capacity}
                  </td>
                  <td>
                    <Time at={w.last_heartbeat_at} /> ({secondsAgo(w.last_heartbeat_at, now)})
                  </td>
                  <td class="wide-only">
                    {w.hostname ?? '—'} {w.version ?? ''}
                  </td>
                  <td class="wide-only">
                    <Time at={w.connected_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
