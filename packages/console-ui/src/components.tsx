import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api';

/** Loads one API resource; `reload` fetches it again (after an action, or when a live event says it changed). */
export function useResource<T>(path: string | null): { data?: T; error?: string; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (path === null) return;
    let live = true;
    api<T>(path).then(
      (data) => live && setState({ data }),
      (err: unknown) => live && setState({ error: errorText(err) }),
    );
    return () => {
      live = false;
    };
  }, [path, version]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { ...state, reload };
}

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge badge-${state.toLowerCase()}`}>{state}</span>;
}

export function Time({ at }: { at?: string | null }) {
  if (!at) return <span>—</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}

export function ErrorNote({ error }: { error?: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Loading({ children }: { children?: ComponentChildren }) {
  return <p aria-busy="true">{children ?? 'Loading…'}</p>;
}

export const json = (value: unknown): string => JSON.stringify(value, null, 2);

export function duration(fromIso: string, toIso: string): string {
  const seconds = Math.max(0, Math.round((Date.parse(toIso) - Date.parse(fromIso)) / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h}h ${m}m ${s}s` : m ? `${m}m ${s}s` : `${s}s`;
}
