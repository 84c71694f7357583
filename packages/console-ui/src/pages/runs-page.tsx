import { RUN_SORT_FIELDS, RUN_SOURCES, RUN_STATES, SORT_ORDERS } from '@conveyor/run-events';
import { ErrorNote, Loading, StateBadge, Time, useResource } from '../components';
import { Link, navigate, useLocation } from '../router';
import { DataTable } from '../table';
import type { RunList } from '../types';
import { StartRunForm } from './start-run-form';

const TEXT_FILTERS = [
  ['q', 'Search'],
  ['creator', 'Creator ID'],
  ['schedule_id', 'Schedule ID'],
  ['skill', 'Skill'],
] as const;
const DATE_FILTERS = [
  ['created_after', 'Created after'],
  ['created_before', 'Created before'],
  ['updated_after', 'Updated after'],
] as const;

/** datetime-local (local time, no zone) ⇄ the API's RFC 3339. */
const toLocalInput = (iso: string | null) =>
  iso
    ? new Date(new Date(iso).getTime() - new Date(iso).getTimezoneOffset() * 60_000)
        .toISOString()
        .slice(0, 16)
    : '';

/**
 * GET /agent/runs with the API's filters and sorts; the page's query string is the API's query, so a filtered
 * list is a link. Paging follows the API's cursor.
 */
export function RunsPage() {
  const { search } = useLocation();
  const query = search.toString();
  const { data, error } = useResource<RunList>(
    `/agent/runs?${query}${query.includes('limit=') ? '' : `${query ? '&' : ''}limit=25`}`,
  );

  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    for (const [key, value] of form) {
      const text = String(value).trim();
      if (!text) continue;
      next.set(key, DATE_FILTERS.some(([k]) => k === key) ? new Date(text).toISOString() : text);
    }
    navigate(`/console/runs?${next.toString()}`);
  };
  const pageLink = (cursor: string) => {
    const next = new URLSearchParams(search);
    next.set('cursor', cursor);
    return `/console/runs?${next.toString()}`;
  };

  return (
    <section aria-labelledby="runs-h">
      <h1 id="runs-h">Runs</h1>
      <StartRunForm />
      <details
        class="filter-panel"
        open={
          !window.matchMedia('(max-width: 700px)').matches || [...search.keys()].some((k) => k !== 'cursor')
        }
      >
        <summary>Filters and sorting</summary>
        <form class="filters" onSubmit={apply} key={query}>
          <label>
            State
            <select name="state" value={search.get('state') ?? ''}>
              <option value="">Any</option>
              {RUN_STATES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            Source
            <select name="source" value={search.get('source') ?? ''}>
              <option value="">Any</option>
              {RUN_SOURCES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          {TEXT_FILTERS.map(([name, label]) => (
            <label key={name}>
              {label}
              <input name={name} type="text" value={search.get(name) ?? ''} />
            </label>
          ))}
          {DATE_FILTERS.map(([name, label]) => (
            <label key={name}>
              {label}
              <input name={name} type="datetime-local" value={toLocalInput(search.get(name))} />
            </label>
          ))}
          <label>
            Sort by
            <select name="sort_by" value={search.get('sort_by') ?? 'updated_at'}>
              {RUN_SORT_FIELDS.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            Order
            <select name="sort_order" value={search.get('sort_order') ?? 'desc'}>
              {SORT_ORDERS.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <div class="buttons">
            <button type="submit">Apply filters</button>
            <Link href="/console/runs">Clear</Link>
          </div>
        </form>
      </details>
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data && (
        <>
          <DataTable
            caption="Runs"
            rows={data.runs}
            rowKey={(run) => run.run_id}
            empty="No runs match."
            columns={[
              {
                header: 'Title',
                cell: (run) => <Link href={`/console/runs/${run.run_id}`}>{run.title || run.run_id}</Link>,
              },
              { header: 'State', cell: (run) => <StateBadge state={run.state} /> },
              { header: 'Source', cell: (run) => run.source ?? '—' },
              {
                header: 'Creator',
                cell: (run) => run.creator?.display_name ?? run.creator?.email ?? run.creator?.uid ?? '—',
                secondary: true,
              },
              { header: 'Created', cell: (run) => <Time at={run.created_at} /> },
              { header: 'Updated', cell: (run) => <Time at={run.updated_at} />, secondary: true },
            ]}
          />
          <nav class="pager" aria-label="Pages">
            {search.has('cursor') && (
              <Link
                href={`/console/runs?${new URLSearchParams([...search].filter(([k]) => k !== 'cursor')).toString()}`}
              >
                First page
              </Link>
            )}
            {data.page_info.has_next_page && data.page_info.next_cursor && (
              <Link href={pageLink(data.page_info.next_cursor)}>Next page</Link>
            )}
          </nav>
        </>
      )}
    </section>
  );
}
