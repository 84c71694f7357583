import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, API_BASE, errorText } from '../api';
import { duration, ErrorNote, json, Loading, StateBadge, Time, useResource } from '../components';
import { RunLog, type Message, type Step, type StreamedEvent } from '../run-log';
import { Link, navigate } from '../router';
import type { RunItem } from '../types';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED']);
/** Events that change what GET /agent/runs/{id} returns (state, status, artifacts). */
const REFRESHES_RUN = new Set(['state_changed', 'artifact', 'followup_received']);

/**
 * Follows the run's event stream. Renders are batched per animation frame, so a run emitting hundreds of events a
 * second costs one render per frame; the EventSource resumes after the last event it saw (Last-Event-ID).
 */
function useRunLog(runId: string, onRunChanged: () => void): { log: RunLog; live: boolean; error?: string } {
  const log = useMemo(() => new RunLog(), [runId]);
  const [, setVersion] = useState(0);
  const [live, setLive] = useState(false);
  const [error, setError] = useState<string>();
  const changed = useRef(onRunChanged);
  changed.current = onRunChanged;
  useEffect(() => {
    const source = new EventSource(`${API_BASE}/agent/runs/${encodeURIComponent(runId)}/events`);
    let frame = 0;
    let refresh = false;
    const flush = () => {
      frame = 0;
      setVersion((v) => v + 1);
      if (refresh) changed.current();
      refresh = false;
    };
    source.addEventListener('open', () => setLive(true));
    source.addEventListener('error', () => setLive(false));
    source.addEventListener('run_event', (msg) => {
      const event = JSON.parse((msg as MessageEvent<string>).data) as StreamedEvent;
      if (!log.apply(event)) return;
      if (REFRESHES_RUN.has(event.kind)) refresh = true;
      frame ||= requestAnimationFrame(flush);
    });
    source.addEventListener('stream_error', (msg) => {
      setError((JSON.parse((msg as MessageEvent<string>).data) as { detail: string }).detail);
      source.close();
      setLive(false);
    });
    return () => {
      source.close();
      cancelAnimationFrame(frame);
    };
  }, [log, runId]);
  return { log, live, error };
}

function StepView({ step }: { step: Step }) {
  if (step.type === 'text') return <p class="text">{step.text}</p>;
  if (step.type === 'tool')
    return (
      <details class={`tool tool-${step.status}`}>
        <summary>
          Tool <code>{step.name}</code> — {step.status}
        </summary>
        <h4>Arguments</h4>
        <pre>{json(step.input)}</pre>
        {step.output !== undefined && (
          <>
            <h4>Result</h4>
            <pre>{json(step.output)}</pre>
          </>
        )}
      </details>
    );
  return (
    <details class="event">
      <summary>
        {step.kind === 'artifact'
          ? `Artifact ${String(step.data.artifact_type ?? '')}`
          : `${step.kind}: ${String(step.data.text ?? '').slice(0, 120)}`}
      </summary>
      <pre>{json(step.data)}</pre>
    </details>
  );
}

function MessageView({ message }: { message: Message }) {
  const who = message.role === 'user' ? (message.source === 'followup' ? 'Follow-up' : 'Prompt') : 'Agent';
  return (
    <li class={`message message-${message.role}`} data-sequence={message.sequence}>
      <h3>
        {who} <Time at={message.createdAt} />
      </h3>
      {message.steps.map((step) => (
        <StepView key={step.sequence} step={step} />
      ))}
    </li>
  );
}

function timelineText(e: StreamedEvent): string {
  const d = e.data;
  if (e.kind === 'state_changed')
    return `${String(d.from ?? 'new')} → ${String(d.to)}${d.message ? `: ${String(d.message)}` : ''}`;
  if (e.kind === 'setup_step')
    return `Setup ${String(d.step)} ${String(d.status)}${d.detail ? `: ${String(d.detail)}` : ''}`;
  if (e.kind === 'egress_refused')
    return `Sandbox refused a connection to ${String(d.host)}:${String(d.port)} (${String(d.reason)})`;
  if (e.kind === 'workspace_released')
    return `Workspace used ${String(d.disk_bytes)} bytes; ${d.kept_for_debug ? 'kept for the debug window' : 'deleted'}${d.limit ? ` (${String(d.limit)} limit reached)` : ''}`;
  return `Follow-up ${String(d.followup_id)} routed to ${String(d.routed_to)}`;
}

function Artifacts({ run }: { run: RunItem }) {
  if (run.artifacts.length === 0) return <p>No artifacts yet.</p>;
  return (
    <ul class="artifacts">
      {run.artifacts.map((a, i) => {
        const uid = typeof a.data.artifact_uid === 'string' ? a.data.artifact_uid : undefined;
        const url = typeof a.data.url === 'string' ? a.data.url : undefined;
        const name = String(a.data.filename ?? a.data.title ?? a.data.branch ?? url ?? a.artifact_type);
        return (
          <li key={i}>
            <span class="tag">{a.artifact_type}</span> {name}{' '}
            {uid && <a href={`${API_BASE}/agent/artifacts/${encodeURIComponent(uid)}/download`}>Download</a>}
            {!uid && url && /^https?:\/\//.test(url) && (
              <a href={url} rel="noopener noreferrer" target="_blank">
                Open
              </a>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function Actions({ run, onDone }: { run: RunItem; onDone: () => void }) {
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(undefined);
    try {
      await what();
      setNotice(done);
      onDone();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const runPath = `/agent/runs/${encodeURIComponent(run.run_id)}`;
  /** The same prompt, title and agent configuration as a new run, which then opens. */
  const rerun = () =>
    void act(
      () =>
        api<{ run_id: string }>('/agent/runs', {
          method: 'POST',
          body: {
            prompt: run.prompt,
            title: run.title,
            ...(run.agent_config && { config: run.agent_config }),
          },
        }).then((created) => navigate(`/console/runs/${encodeURIComponent(created.run_id)}`)),
      'Run started again',
    );
  const sendFollowup = (e: Event) => {
    e.preventDefault();
    void act(() => api(`${runPath}/followups`, { method: 'POST', body: { message } }), 'Follow-up sent').then(
      () => setMessage(''),
    );
  };
  return (
    <section aria-labelledby="actions-h">
      <h2 id="actions-h">Actions</h2>
      {!TERMINAL.has(run.state) && run.is_run_type_cancellable && (
        <button
          type="button"
          class="danger"
          onClick={() =>
            void act(() => api(`${runPath}/cancel`, { method: 'POST' }), 'Cancellation requested')
          }
        >
          Cancel run
        </button>
      )}{' '}
      {run.prompt && (
        <button type="button" onClick={rerun}>
          Run again
        </button>
      )}
      <form class="followup" onSubmit={sendFollowup}>
        <label for="followup">Follow-up message</label>
        <textarea
          id="followup"
          rows={3}
          required
          value={message}
          onInput={(e) => setMessage(e.currentTarget.value)}
        />
        <button type="submit">Send follow-up</button>
      </form>
      <p role="status">{notice}</p>
      <ErrorNote error={error} />
    </section>
  );
}

export function RunPage({ runId }: { runId: string }) {
  const path = `/agent/runs/${encodeURIComponent(runId)}`;
  const { data: run, error, reload } = useResource<RunItem>(path);
  const { log, live, error: streamError } = useRunLog(runId, reload);
  const [now, setNow] = useState(() => new Date().toISOString());
  useEffect(() => {
    if (run && TERMINAL.has(run.state)) return;
    const timer = setInterval(() => setNow(new Date().toISOString()), 1000);
    return () => clearInterval(timer);
  }, [run?.state]);
  if (error) return <ErrorNote error={error} />;
  if (!run) return <Loading />;
  const end = TERMINAL.has(run.state) ? run.updated_at : now;
  return (
    <article class="run">
      <p>
        <Link href="/console/runs">← All runs</Link>
      </p>
      <h1>{run.title || run.run_id}</h1>
      <dl class="facts">
        <dt>State</dt>
        <dd aria-live="polite" id="run-state">
          <StateBadge state={run.state} />
        </dd>
        <dt>Status</dt>
        <dd aria-live="polite" id="run-status">
          {run.status_message?.message ?? '—'}
          {run.status_message?.error_code && <code> ({run.status_message.error_code})</code>}
        </dd>
        <dt>Run time</dt>
        <dd>{duration(run.started_at ?? run.created_at, end)}</dd>
        <dt>Usage</dt>
        <dd id="run-usage">
          {log.usage.inputTokens} input / {log.usage.outputTokens} output tokens
          {log.usage.costUsd ? `, $${log.usage.costUsd.toFixed(4)}` : ''}
        </dd>
        <dt>Source</dt>
        <dd>{run.source ?? '—'}</dd>
        <dt>Created by</dt>
        <dd>{run.creator?.display_name ?? run.creator?.email ?? run.creator?.uid ?? '—'}</dd>
        <dt>Created</dt>
        <dd>
          <Time at={run.created_at} />
        </dd>
        <dt>Live updates</dt>
        <dd>
          <span id="live-status">{live ? 'connected' : 'reconnecting'}</span>,{' '}
          <span id="event-count">{log.received}</span> events
        </dd>
      </dl>
      <ErrorNote error={streamError} />
      <p>
        <a href={`${API_BASE}${path}/transcript`}>Raw transcript</a>
      </p>
      <Actions run={run} onDone={reload} />
      <section aria-labelledby="artifacts-h">
        <h2 id="artifacts-h">Artifacts</h2>
        <Artifacts run={run} />
      </section>
      <section aria-labelledby="timeline-h">
        <h2 id="timeline-h">Timeline</h2>
        <ol class="timeline">
          {log.timeline.map((e) => (
            <li key={e.sequence}>
              <Time at={e.created_at} /> {timelineText(e)}
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="conversation-h">
        <h2 id="conversation-h">Conversation</h2>
        <ol class="conversation">
          {log.messages.map((m) => (
            <MessageView key={m.sequence} message={m} />
          ))}
        </ol>
      </section>
    </article>
  );
}
