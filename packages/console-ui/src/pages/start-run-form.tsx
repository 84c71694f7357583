import { api } from '../api';
import { useResource } from '../components';
import { ActionForm, Select, TextArea, TextField, text, useAction } from '../forms';
import { navigate } from '../router';
import type { EnvironmentList, ModelList } from '../types';

const HARNESSES: Array<[string, string]> = [
  ['', 'Default'],
  ['oz', 'oz'],
  ['claude', 'Claude Code'],
  ['codex', 'Codex'],
  ['gemini', 'Gemini CLI'],
];

/** POST /agent/runs with a prompt and the choices a person makes (environment, harness, model); opens the run. */
export function StartRunForm() {
  const action = useAction();
  const environments = useResource<EnvironmentList>('/agent/environments');
  const models = useResource<ModelList>('/agent/models');
  const start = async (form: FormData) => {
    const environment_id = text(form, 'environment_id');
    const model_id = text(form, 'model_id');
    const harness = text(form, 'harness');
    const created = await action.run(
      () =>
        api<{ run_id: string }>('/agent/runs', {
          method: 'POST',
          body: {
            prompt: text(form, 'prompt'),
            ...(text(form, 'title') && { title: text(form, 'title') }),
            config: {
              ...(environment_id && { environment_id }),
              ...(model_id && { model_id }),
              ...(harness && { harness: { type: harness } }),
            },
          },
        }),
      'Run started',
    );
    if (created) navigate(`/console/runs/${encodeURIComponent(created.run_id)}`);
  };
  return (
    <details class="start-run">
      <summary>Start a run</summary>
      <ActionForm id="start-run" action={action} onSubmit={(f) => void start(f)} submit="Start run">
        <TextArea name="prompt" label="Prompt" rows={4} required />
        <TextField name="title" label="Title" hint="Optional; the API derives one from the prompt" />
        <Select
          name="environment_id"
          label="Environment"
          options={[
            ['', 'None'],
            ...(environments.data?.environments ?? []).map((e): [string, string] => [
              e.uid,
              e.config.name ?? e.uid,
            ]),
          ]}
        />
        <Select name="harness" label="Harness" options={HARNESSES} />
        <Select
          name="model_id"
          label="Model"
          options={[
            ['', 'Default'],
            ...(models.data?.models ?? [])
              .filter((m) => !m.disabled)
              .map((m): [string, string] => [m.id, m.display_name]),
          ]}
        />
      </ActionForm>
    </details>
  );
}
