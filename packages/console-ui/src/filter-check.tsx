import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api';
import type { FilterTest } from './types';

/** How long typing must pause before the filter is sent: one request per pause, not one per key. */
const DEBOUNCE_MS = 400;

type Check =
  { state: 'idle' | 'checking' } | { state: 'done'; test: FilterTest } | { state: 'error'; message: string };

/** Parses JSON the person typed; `undefined` for an empty field, an Error for text that is not JSON. */
function typedJson(textValue: string): unknown {
  if (!textValue.trim()) return undefined;
  try {
    return JSON.parse(textValue) as unknown;
  } catch (err) {
    return new Error(`not JSON: ${errorText(err)}`);
  }
}

/**
 * The API's verdict on a payload filter against a pasted sample body (`POST …/webhooks/{uid}/test-filter` with
 * `sample_payload`), fetched when typing pauses. The browser only parses the JSON it must send; every rule of the
 * filter is the API's, and its answer (a verdict, or the 400 naming what is wrong) is what is shown.
 */
export function useFilterCheck(path: string | null, filterText: string, sampleText: string): Check {
  const [check, setCheck] = useState<Check>({ state: 'idle' });
  useEffect(() => {
    const filter = typedJson(filterText);
    const sample = typedJson(sampleText);
    if (path === null || sample === undefined) return setCheck({ state: 'idle' });
    if (filter instanceof Error)
      return setCheck({ state: 'error', message: `The filter is ${filter.message}` });
    if (sample instanceof Error)
      return setCheck({ state: 'error', message: `The sample is ${sample.message}` });
    let live = true;
    const timer = setTimeout(() => {
      setCheck({ state: 'checking' });
      api<FilterTest>(path, {
        method: 'POST',
        body: { sample_payload: sample, ...(filter !== undefined && { filter: { payload: filter } }) },
      }).then(
        (test) => live && setCheck({ state: 'done', test }),
        (err: unknown) =>
          live && setCheck({ state: 'error', message: `The API refused it: ${errorText(err)}` }),
      );
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [path, filterText, sampleText]);
  return check;
}

/** The verdict, next to the filter field it describes (its id is in the field's aria-describedby). */
export function FilterCheckNote({ id, check }: { id: string; check: Check }) {
  return (
    <p id={id} class={`filter-check filter-check-${check.state}`} role="status" aria-live="polite">
      {check.state === 'idle' && 'Paste a sample body to check the filter against it.'}
      {check.state === 'checking' && 'Checking…'}
      {check.state === 'done' &&
        `${check.test.payload_check.passed ? 'Matches' : 'Does not match'} — ${check.test.payload_check.detail}`}
      {check.state === 'error' && check.message}
    </p>
  );
}
