import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { ApiError, errorText } from './api';
import { ErrorNote } from './components';

/** One state-changing request from a form or button: busy while it runs, then a notice or the API's error. */
export interface Action {
  busy: boolean;
  /** How many requests succeeded: a form that starts empty again after each success keys itself on it. */
  done: number;
  notice?: string;
  error?: string;
  fields: Record<string, string>;
  run: <T>(request: () => Promise<T>, notice: string) => Promise<T | undefined>;
}

export function useAction(): Action {
  const [state, setState] = useState<Omit<Action, 'run'>>({ busy: false, done: 0, fields: {} });
  const run = async <T,>(request: () => Promise<T>, notice: string): Promise<T | undefined> => {
    setState((s) => ({ busy: true, done: s.done, fields: {} }));
    try {
      const result = await request();
      setState((s) => ({ busy: false, done: s.done + 1, notice, fields: {} }));
      return result;
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {};
      setState((s) => ({ busy: false, done: s.done, error: errorText(err), fields }));
      return undefined;
    }
  };
  return { ...state, run };
}

const FieldErrors = createContext<{ id: string; fields: Record<string, string> }>({ id: '', fields: {} });

/**
 * A form whose fields show the API's errors where they belong: a field named like the API's body key gets its
 * message under it (aria-invalid, aria-describedby); whatever no field claims shows above the buttons.
 */
export function ActionForm({
  id,
  action,
  onSubmit,
  submit,
  resetOnSuccess = false,
  children,
}: {
  id: string;
  action: Action;
  onSubmit: (form: FormData) => void;
  submit: string;
  /** Start empty again after each success (a create form), instead of keeping the values (an edit form). */
  resetOnSuccess?: boolean;
  children: ComponentChildren;
}) {
  const handle = (e: Event) => {
    e.preventDefault();
    onSubmit(new FormData(e.currentTarget as HTMLFormElement));
  };
  return (
    <FieldErrors.Provider value={{ id, fields: action.fields }}>
      <form
        id={id}
        key={resetOnSuccess ? action.done : undefined}
        class="action-form"
        onSubmit={handle}
        noValidate
      >
        {children}
        <ErrorNote
          error={
            action.error && Object.keys(action.fields).length > 0
              ? 'The API refused the fields marked above.'
              : action.error
          }
        />
        <div class="buttons">
          <button type="submit" disabled={action.busy}>
            {submit}
          </button>
          <span role="status">{action.notice}</span>
        </div>
      </form>
    </FieldErrors.Provider>
  );
}

type FieldProps = {
  name: string;
  label: string;
  hint?: string;
  /** The initial value; the field keeps what is typed from then on (a re-render after an error keeps it). */
  value?: string;
  onInput?: (value: string) => void;
  /** The id of another element describing the field (e.g. a live check of its value). */
  describedBy?: string;
};

/** A field's own copy of its value, so re-rendering the form never resets what the person typed. */
function useValue(p: FieldProps): [string, (e: { currentTarget: { value: string } }) => void] {
  const [value, setValue] = useState(p.value ?? '');
  return [
    value,
    (e) => {
      setValue(e.currentTarget.value);
      p.onInput?.(e.currentTarget.value);
    },
  ];
}

function useFieldError(name: string, also?: string) {
  const { id, fields } = useContext(FieldErrors);
  const inputId = `${id}-${name}`;
  const error = fields[name];
  const describedBy = [error && `${inputId}-error`, `${inputId}-hint`, also].filter(Boolean).join(' ');
  /** What every control of the field carries: its id and name, and the error and hint it is described by. */
  const control = {
    id: inputId,
    name,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
  };
  return { inputId, error, control, errorId: `${inputId}-error`, hintId: `${inputId}-hint` };
}

function FieldFrame({
  f,
  label,
  hint,
  children,
}: {
  f: ReturnType<typeof useFieldError>;
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={f.error ? 'field field-invalid' : 'field'}>
      <label for={f.inputId}>{label}</label>
      {children}
      <small id={f.hintId} class="hint">
        {hint}
      </small>
      {f.error && (
        <small id={f.errorId} class="field-error">
          {f.error}
        </small>
      )}
    </div>
  );
}

export function TextField({
  type = 'text',
  ...p
}: FieldProps & { type?: 'text' | 'email' | 'url' | 'password'; required?: boolean }) {
  const f = useFieldError(p.name);
  const [value, onInput] = useValue(p);
  // Preact types each input type's attributes apart; these four share the ones used here.
  const typed = { type } as { type: 'text' };
  return (
    <FieldFrame f={f} label={p.label} hint={p.hint}>
      <input {...f.control} {...typed} value={value} required={p.required} onInput={onInput} />
    </FieldFrame>
  );
}

export function TextArea(p: FieldProps & { rows?: number; required?: boolean }) {
  const f = useFieldError(p.name, p.describedBy);
  const [value, onInput] = useValue(p);
  return (
    <FieldFrame f={f} label={p.label} hint={p.hint}>
      <textarea {...f.control} rows={p.rows ?? 3} value={value} required={p.required} onInput={onInput} />
    </FieldFrame>
  );
}

export function Select(p: FieldProps & { options: Array<[value: string, label: string]> }) {
  const f = useFieldError(p.name);
  const [value, onInput] = useValue(p);
  return (
    <FieldFrame f={f} label={p.label} hint={p.hint}>
      <select {...f.control} value={value} onChange={onInput}>
        {p.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

/** Bytes for people: `68 B`, `12.3 KB`, `5.2 MB` (decimal units, as file managers show them). */
export function byteSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** Files to upload with the form: each chosen file listed with its size, and their total. */
export function FileField(p: { name: string; label: string; hint?: string; accept?: string }) {
  const f = useFieldError(p.name);
  const [files, setFiles] = useState<File[]>([]);
  const total = files.reduce((sum, file) => sum + file.size, 0);
  return (
    <FieldFrame f={f} label={p.label} hint={p.hint}>
      <input
        {...f.control}
        type="file"
        multiple
        accept={p.accept}
        onChange={(e) => setFiles(Array.from(e.currentTarget.files ?? []))}
      />
      {files.length > 0 && (
        <ul class="chosen-files" aria-label="Chosen files">
          {files.map((file, i) => (
            <li key={i}>
              {file.name} — {byteSize(file.size)}
            </li>
          ))}
          {files.length > 1 && <li class="total">Together {byteSize(total)}</li>}
        </ul>
      )}
    </FieldFrame>
  );
}

/** The files chosen in a form's file field (an empty field still submits one nameless, empty entry). */
export const files = (form: FormData, name: string): File[] =>
  form.getAll(name).filter((v): v is File => v instanceof File && v.name !== '');

/** A file's bytes as base64, the encoding the API's JSON bodies carry files in. */
export function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    // A data URL is `data:<type>;base64,<data>`: the browser's own encoder, without building a binary string.
    reader.onload = () => resolve(String(reader.result).slice(String(reader.result).indexOf(',') + 1));
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

export function Checkbox({
  name,
  label,
  checked,
  value = 'on',
}: {
  name: string;
  label: string;
  checked: boolean;
  value?: string;
}) {
  const [on, setOn] = useState(checked);
  return (
    <label class="check">
      <input
        type="checkbox"
        name={name}
        value={value}
        checked={on}
        onChange={(e) => setOn(e.currentTarget.checked)}
      />{' '}
      {label}
    </label>
  );
}

/** Non-empty trimmed lines of a textarea: the console's way to enter a list. */
export const lines = (form: FormData, name: string): string[] =>
  String(form.get(name) ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

export const text = (form: FormData, name: string): string => String(form.get(name) ?? '').trim();

/** A value the API shows exactly once (a new secret or key), with how to treat it. */
export function ShownOnce({ label, value }: { label: string; value?: string }) {
  if (!value) return null;
  return (
    <div class="shown-once" role="status">
      <p>
        <strong>{label}</strong> — shown this once; copy it now.
      </p>
      <code class="secret-value">{value}</code>
    </div>
  );
}
