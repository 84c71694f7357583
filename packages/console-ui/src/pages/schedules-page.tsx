import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Loading, StateBadge, Time, useResource } from '../components';
import { ActionForm, TextArea, TextField, text, useAction } from '../forms';
import { Link, navigate } from '../router';
import { DataTable } from '../table';
import type { Schedule } from '../types';

/** cron-parser is most of the bundle's weight and only the schedule form needs it: it loads with the schedules page. */
let cronPreview: Promise<typeof import('../cron-preview')> | undefined;

function useNextFireTimes(cron: string, timezone: string): Date[] | string | undefined {
  const [parser, setParser] = useState<typeof import('../cron-preview') | string>();
  useEffect(() => {
    cronPreview ??= import('../cron-preview');
    void cronPreview.then(setParser, () => {
      cronPreview = undefined; // the next visit tries again
      setParser('The preview did not load; the API checks the expression when the schedule is created');
    });
  }, []);
  return typeof parser === 'string' ? parser : parser?.nextFireTimes(cron, timezone);
}

/** Creates a schedule; the next five times it would fire are shown as the cron expression is typed. */
function CreateScheduleForm() {
  const action = useAction();
  const [cron, setCron] = useState('0 9 * * 1-5');
  const [timezone, setTimezone] = useState('UTC');
  const preview = useNextFireTimes(cron, timezone);
  const create = async (form: FormData) => {
    const created = await action.run(
      () =>
        api<Schedule>('/agent/schedules', {
          method: 'POST',
          body: {
            name: text(form, 'name'),
            cron_schedule: text(form, 'cron_schedule'),
            timezone: text(form, 'timezone') || 'UTC',
            prompt: text(form, 'prompt'),
          },
        }),
      'Schedule created',
    );
    if (created) navigate(`/console/schedules/${encodeURIComponent(created.id)}`);
  };
  return (
    <details class="create">
      <summary>New schedule</summary>
      <ActionForm
        id="schedule-create"
        action={action}
        onSubmit={(f) => void create(f)}
        submit="Create schedule"
      >
        <TextField name="name" label="Name" />
        <TextField
          name="cron_schedule"
          label="Cron"
          value={cron}
          onInput={setCron}
          hint="minute hour day month weekday"
        />
        <TextField
          name="timezone"
          label="Time zone"
          value={timezone}
          onInput={setTimezone}
          hint="IANA, e.g. Europe/Paris"
        />
        <div class="cron-preview" aria-live="polite">
          <h3>Next five times</h3>
          {preview === undefined ? (
            <Loading />
          ) : typeof preview === 'string' ? (
            <p class="field-error">{preview}</p>
          ) : (
            <ol>
              {preview.map((d) => (
                <li key={d.toISOString()}>
                  <Time at={d.toISOString()} />
                </li>
              ))}
            </ol>
          )}
        </div>
        <TextArea name="prompt" label="Prompt" rows={3} />
      </ActionForm>
    </details>
  );
}

export function SchedulesPage() {
  const { data, error } = useResource<{ schedules: Schedule[] }>('/agent/schedules');
  return (
    <section aria-labelledby="schedules-h">
      <h1 id="schedules-h">Schedules</h1>
      <CreateScheduleForm />
      <ErrorNote error={error} />
      {!data && !error && <Loading />}
      {data && (
        <DataTable
          caption="Schedules"
          rows={data.schedules}
          rowKey={(s) => s.id}
          empty="No schedules."
          columns={[
            { header: 'Name', cell: (s) => <Link href={`/console/schedules/${s.id}`}>{s.name}</Link> },
            {
              header: 'Cron',
              cell: (s) => (
                <>
                  <code>{s.cron_schedule}</code> ({s.timezone})
                </>
              ),
            },
            { header: 'Enabled', cell: (s) => (s.enabled ? 'Yes' : 'Paused') },
            { header: 'Next run', cell: (s) => <Time at={s.history.next_run} /> },
            { header: 'Last ran', cell: (s) => <Time at={s.history.last_ran} /> },
          ]}
        />
      )}
    </section>
  );
}

/** One schedule: when it runs next and the runs it started (its history). */
export function SchedulePage({ scheduleId }: { scheduleId: string }) {
  const { data: s, error } = useResource<Schedule>(`/agent/schedules/${encodeURIComponent(scheduleId)}`);
  if (error) return <ErrorNote error={error} />;
  if (!s) return <Loading />;
  return (
    <section aria-labelledby="schedule-h">
      <p>
        <Link href="/console/schedules">← Schedules</Link>
      </p>
      <h1 id="schedule-h">{s.name}</h1>
      <dl class="facts">
        <dt>Cron</dt>
        <dd>
          <code>{s.cron_schedule}</code> ({s.timezone})
        </dd>
        <dt>Enabled</dt>
        <dd>{s.enabled ? 'Yes' : 'Paused'}</dd>
        <dt>Next run</dt>
        <dd>
          <Time at={s.history.next_run} />
        </dd>
        <dt>Last ran</dt>
        <dd>
          <Time at={s.history.last_ran} />
        </dd>
        {s.last_spawn_error && (
          <>
            <dt>Last error</dt>
            <dd>{s.last_spawn_error}</dd>
          </>
        )}
      </dl>
      <h2>Prompt</h2>
      <pre>{s.prompt}</pre>
      <h2>Recent runs</h2>
      <ul>
        {(s.history.recent_runs ?? []).map((r) => (
          <li key={r.run_id}>
            <StateBadge state={r.state} />{' '}
            <Link href={`/console/runs/${r.run_id}`}>{r.title || r.run_id}</Link> <Time at={r.created_at} />
          </li>
        ))}
      </ul>
      <p>
        <Link href={`/console/runs?schedule_id=${encodeURIComponent(s.id)}`}>All runs of this schedule</Link>
      </p>
    </section>
  );
}
