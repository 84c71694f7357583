import { api } from '../api';
import { useResource } from '../components';
import {
  ActionForm,
  FileField,
  Select,
  TextArea,
  TextField,
  base64Of,
  files,
  text,
  useAction,
} from '../forms';
import { EnvironmentSelect } from '../environment-select';
import { navigate } from '../router';
import type { ModelList } from '../types';

/** What the API takes as run attachments (api-contract.md §2.4); it checks them, the hint only says so. */
const ATTACHMENT_TYPES = 'image/jpeg,image/png,image/gif,image/webp';

const HARNESSES: Array<[string, string]> = [
  ['', 'Default'],
  ['oz', 'oz'],
  ['claude', 'Claude Code'],
  ['codex', 'Codex'],
  ['gemini', 'Gemini CLI'],
];

/**
 * POST /agent/runs with a prompt and the choices a person makes (environment, harness, model, attachments); opens
 * the run.
 */
export function StartRunForm() {
  const action = useAction();
  const models = useResource<ModelList>('/agent/models');
  const start = async (form: FormData) => {
    const environment_id = text(form, 'environment_id');
    const model_id = text(form, 'model_id');
    const harness = text(form, 'harness');
    const created = await action.run(async () => {
      const attachments = await Promise.all(
        files(form, 'attachments').map(async (file) => ({
          file_name: file.name,
          mime_type: file.type,
          data: await base64Of(file),
        })),
      );
      return api<{ run_id: string }>('/agent/runs', {
        method: 'POST',
        body: {
          prompt: text(form, 'prompt'),
          ...(text(form, 'title') && { title: text(form, 'title') }),
          config: {
            ...(environment_id && { environment_id }),
            ...(model_id && { model_id }),
            ...(harness && { harness: { type: harness } }),
          },
          ...(attachments.length > 0 && { attachments }),
        },
      });
    }, 'Run started');
    if (created) navigate(`/console/runs/${encodeURIComponent(created.run_id)}`);
  };
  return (
    <details class="start-run">
      <summary>Start a run</summary>
      <ActionForm id="start-run" action={action} onSubmit={(f) => void start(f)} submit="Start run">
        <TextArea name="prompt" label="Prompt" rows={4} required />
        <TextField name="title" label="Title" hint="Optional; the API derives one from the prompt" />
        <EnvironmentSelect none="None" />
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
        <FileField
          name="attachments"
          label="Attachments"
          accept={ATTACHMENT_TYPES}
          hint="Up to 5 images (JPEG, PNG, GIF, WebP), at most 5 MiB each; the run finds them under attachments/ in its workspace"
        />
      </ActionForm>
    </details>
  );
}
