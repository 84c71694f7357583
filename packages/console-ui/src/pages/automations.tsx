import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, json, useResource } from '../components';
import { EnvironmentSelect } from '../environment-select';
import { FilterCheckNote, useFilterCheck } from '../filter-check';
import { ActionForm, Checkbox, Select, TextArea, TextField, text, useAction } from '../forms';
import type { Automation, Webhook } from '../types';

const automationsPath = (factoryId: string) => `/factories/${encodeURIComponent(factoryId)}/automations`;

/**
 * Creates or edits an automation: the webhook that triggers it, the prompt, the environment and a payload filter,
 * which is checked against a pasted sample body as it is typed (`useFilterCheck`). Saving sends the filter as typed:
 * text that is not JSON goes as a string, so the API's 400 names the field like any other refusal.
 */
function AutomationForm({
  factoryId,
  webhooks,
  automation,
  onSaved,
}: {
  factoryId: string;
  webhooks: Webhook[];
  automation?: Automation;
  onSaved: () => void;
}) {
  const action = useAction();
  const filter = automation?.trigger?.filter;
  const [webhookUid, setWebhookUid] = useState(filter?.webhook_ids?.[0] ?? webhooks[0]?.webhook_uid ?? '');
  const [filterText, setFilterText] = useState(filter?.payload === undefined ? '' : json(filter.payload));
  const [sampleText, setSampleText] = useState('');
  const id = automation ? `automation-edit-${automation.automation_id}` : `automation-create-${factoryId}`;
  const check = useFilterCheck(
    webhookUid
      ? `/factories/${encodeURIComponent(factoryId)}/webhooks/${encodeURIComponent(webhookUid)}/test-filter`
      : null,
    filterText,
    sampleText,
  );
  const save = async (form: FormData) => {
    let payload: unknown = filterText.trim() || undefined;
    try {
      payload = payload === undefined ? undefined : JSON.parse(filterText);
    } catch {
      // Sent as the text it is: the API refuses it at `trigger`, shown under the field.
    }
    const environmentId = text(form, 'environment_id');
    const body = {
      name: text(form, 'name'),
      prompt: text(form, 'prompt'),
      enabled: form.get('enabled') === 'on',
      agent_config: environmentId ? { environment_id: environmentId } : automation ? null : undefined,
      trigger: {
        provider: 'webhook',
        event: 'received',
        filter: { webhook_ids: webhookUid ? [webhookUid] : [], ...(payload !== undefined && { payload }) },
      },
    };
    const saved = await action.run(
      () =>
        automation
          ? api(`${automationsPath(factoryId)}/${encodeURIComponent(automation.automation_id)}`, {
              method: 'PATCH',
              body,
            })
          : api(automationsPath(factoryId), { method: 'POST', body }),
      automation ? 'Automation saved' : 'Automation created',
    );
    if (saved) onSaved();
  };
  return (
    <ActionForm
      id={id}
      action={action}
      onSubmit={(f) => void save(f)}
      submit={automation ? 'Save automation' : 'Create automation'}
    >
      <TextField name="name" label="Name" value={automation?.name} />
      <Select
        name="webhook"
        label="Webhook"
        hint="Its accepted deliveries start a run"
        value={webhookUid}
        onInput={setWebhookUid}
        options={webhooks.map((w): [string, string] => [w.webhook_uid, w.name])}
      />
      <TextArea name="prompt" label="Prompt" rows={3} value={automation?.prompt} />
      <EnvironmentSelect none="None" value={automation?.agent_config.environment_id ?? ''} />
      <TextArea
        name="sample_payload"
        label="Sample body (JSON, not saved)"
        hint="Paste a delivery's body: the filter is checked against it as you type"
        rows={4}
        onInput={setSampleText}
      />
      <TextArea
        name="trigger"
        label="Payload filter (JSON)"
        hint='Optional, e.g. {"action": ["opened"]} (packages/payload-filter/README.md)'
        rows={4}
        value={filterText}
        onInput={setFilterText}
        describedBy={`${id}-check`}
      />
      <FilterCheckNote id={`${id}-check`} check={check} />
      <Checkbox name="enabled" label="Enabled" checked={automation?.enabled ?? true} />
    </ActionForm>
  );
}

/** One automation: what triggers it and what it asks; admins edit or delete it. */
function AutomationCard({
  automation,
  webhooks,
  isAdmin,
  onChanged,
}: {
  automation: Automation;
  webhooks: Webhook[];
  isAdmin: boolean;
  onChanged: () => void;
}) {
  const remove = useAction();
  const [editing, setEditing] = useState(false);
  const filter = automation.trigger?.filter;
  const names = (filter?.webhook_ids ?? []).map(
    (uid) => webhooks.find((w) => w.webhook_uid === uid)?.name ?? uid,
  );
  const del = async () => {
    if (!window.confirm(`Delete the automation ${automation.name}?`)) return;
    const path = `${automationsPath(automation.factory_id)}/${encodeURIComponent(automation.automation_id)}`;
    // DELETE answers 204 (no body): `true` tells success from the refusal `run` answers with `undefined`.
    if (await remove.run(() => api(path, { method: 'DELETE' }).then(() => true), 'Deleted')) onChanged();
  };
  return (
    <li class="card">
      <h4>{automation.name}</h4>
      <p>
        {automation.enabled ? 'Enabled' : 'Disabled'} · on {names.join(', ') || 'no webhook'}
        {automation.agent_config.environment_id && (
          <> · environment {automation.agent_config.environment_id}</>
        )}
      </p>
      <p class="prompt">{automation.prompt}</p>
      {filter?.payload !== undefined && (
        <pre aria-label={`Payload filter of ${automation.name}`}>{json(filter.payload)}</pre>
      )}
      {isAdmin && automation.managed_by === 'api' && (
        <div class="admin-controls">
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            Edit <span class="visually-hidden">{automation.name}</span>
          </button>
          <button type="button" class="danger" onClick={() => void del()} disabled={remove.busy}>
            Delete <span class="visually-hidden">{automation.name}</span>
          </button>
          <ErrorNote error={remove.error} />
        </div>
      )}
      {editing && (
        <AutomationForm
          factoryId={automation.factory_id}
          webhooks={webhooks}
          automation={automation}
          onSaved={() => {
            setEditing(false);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

/** A factory's automations; admins add one when the factory has a webhook to trigger it. */
export function Automations({
  factoryId,
  webhooks,
  isAdmin,
}: {
  factoryId: string;
  webhooks: Webhook[];
  isAdmin: boolean;
}) {
  const { data, error, reload } = useResource<{ automations: Automation[] }>(automationsPath(factoryId));
  const [formKey, setFormKey] = useState(0);
  return (
    <section aria-labelledby={`automations-${factoryId}`}>
      <h3 id={`automations-${factoryId}`}>Automations</h3>
      {isAdmin && webhooks.length > 0 && (
        <details class="create">
          <summary>New automation</summary>
          <AutomationForm
            key={formKey}
            factoryId={factoryId}
            webhooks={webhooks}
            onSaved={() => {
              setFormKey((k) => k + 1);
              reload();
            }}
          />
        </details>
      )}
      <ErrorNote error={error} />
      {data?.automations.length === 0 && <p>No automations.</p>}
      <ul class="cards">
        {data?.automations.map((a) => (
          <AutomationCard
            key={a.automation_id}
            automation={a}
            webhooks={webhooks}
            isAdmin={isAdmin}
            onChanged={reload}
          />
        ))}
      </ul>
    </section>
  );
}
