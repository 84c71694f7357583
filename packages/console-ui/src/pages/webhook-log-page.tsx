import { useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { ErrorNote, json, Loading, Time, useResource } from '../components';
import { Link } from '../router';
import { DataTable } from '../table';
import type { Delivery, Webhook } from '../types';
import { WebhookAdminControls } from './webhooks-page';

function DeliveryRow({ base, delivery }: { base: string; delivery: Delivery }) {
  const [expanded, setExpanded] = useState<Delivery>();
  const [error, setError] = useState<string>();
  const show = async () => {
    if (expanded) return setExpanded(undefined);
    try {
      setExpanded(await api<Delivery>(`${base}/deliveries/${encodeURIComponent(delivery.id)}`));
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <>
      <tr>
        <td>
          <Time at={delivery.received_at} />
        </td>
        <td>
          <code>{delivery.delivery_id}</code>
        </td>
        <td>
          <span class={`label label-${delivery.label.split(' ')[0]!.toLowerCase()}`}>{delivery.label}</span>
          {delivery.reason && <span class="reason"> — {delivery.reason}</span>}
        </td>
        <td>{delivery.size_bytes} B</td>
        <td>
          {delivery.run_ids.length === 0
            ? '—'
            : delivery.run_ids.map((id) => (
                <Link key={id} href={`/console/runs/${id}`} class="run-link">
                  {id.slice(0, 8)}
                </Link>
              ))}
        </td>
        <td>
          <button type="button" aria-expanded={expanded !== undefined} onClick={show}>
            {expanded ? 'Hide' : 'Payload'} <span class="visually-hidden">of {delivery.delivery_id}</span>
          </button>
        </td>
      </tr>
      {(expanded || error) && (
        <tr class="payload-row">
          <td colSpan={6}>
            <ErrorNote error={error} />
            {expanded && (
              <>
                <h4>Payload</h4>
                <pre>
                  {expanded.has_payload
                    ? json(expanded.payload)
                    : 'Not stored (rejected and duplicate deliveries keep no body).'}
                </pre>
                <h4>Outcome</h4>
                <pre>{json(expanded.outcome)}</pre>
              </>
            )}
          </td>
        </tr>
      )}
    </>
  );
}

/** One webhook's delivery log (newest first, five labels), each entry's payload and the runs it started. */
export function WebhookLogPage({
  factoryId,
  webhookUid,
  isAdmin,
}: {
  factoryId: string;
  webhookUid: string;
  isAdmin: boolean;
}) {
  const base = `/factories/${encodeURIComponent(factoryId)}/webhooks/${encodeURIComponent(webhookUid)}`;
  const webhook = useResource<Webhook>(base);
  const [cursor, setCursor] = useState<string>('');
  const log = useResource<{ deliveries: Delivery[]; next_cursor?: string }>(
    `${base}/deliveries?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
  );
  return (
    <section aria-labelledby="log-h">
      <p>
        <Link href="/console/webhooks">← Webhooks</Link>
      </p>
      <h1 id="log-h">Delivery log{webhook.data ? `: ${webhook.data.name}` : ''}</h1>
      <ErrorNote error={webhook.error ?? log.error} />
      {webhook.data && (
        <p>
          {webhook.data.enabled ? 'Enabled' : 'Disabled'} · <code>{webhook.data.url}</code>
        </p>
      )}
      {webhook.data && isAdmin && <WebhookAdminControls webhook={webhook.data} onChanged={webhook.reload} />}
      {!log.data && !log.error && <Loading />}
      {log.data && (
        <>
          <button type="button" onClick={log.reload}>
            Refresh
          </button>
          <DataTable
            caption="Deliveries"
            rows={log.data.deliveries}
            rowKey={(d) => d.id}
            empty="No deliveries yet."
            columns={['Received', 'Delivery ID', 'Label', 'Size', 'Runs started', 'Payload'].map(
              (header) => ({
                header,
              }),
            )}
            renderRow={(d, key) => <DeliveryRow key={key} base={base} delivery={d} />}
          />
          <nav class="pager" aria-label="Pages">
            {cursor && (
              <button type="button" onClick={() => setCursor('')}>
                First page
              </button>
            )}
            {log.data.next_cursor && (
              <button type="button" onClick={() => setCursor(log.data!.next_cursor!)}>
                Next page
              </button>
            )}
          </nav>
        </>
      )}
    </section>
  );
}
