// Rules of `GET /agent/runs`: the gateway validates the query string with them (the only place that does; ListRuns
// is gateway-only), the orchestrator uses the defaults and types, the console the enumerations. docs/runs.md
// explains each one.

export const RUN_SORT_FIELDS = ['updated_at', 'created_at', 'title', 'agent'] as const;
export type RunSortField = (typeof RUN_SORT_FIELDS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

export const DEFAULT_RUN_LIST_LIMIT = 20;
export const MAX_RUN_LIST_LIMIT = 100;
/** `metadata[<key>]=<value>` pairs per request (contract §2.5). */
export const MAX_METADATA_FILTERS = 5;
/** Longest accepted `q`, in characters, and most words in it. */
export const MAX_SEARCH_LENGTH = 200;
export const MAX_SEARCH_TERMS = 8;

/** `q` as distinct, case-folded words (whitespace-separated); each must match (see docs/runs.md). */
export function searchTerms(q: string): string[] {
  return [...new Set(q.trim().toLowerCase().split(/\s+/u).filter(Boolean))];
}

/** `environment_id` value meaning "runs without an environment"; real IDs are 22 alphanumerics, so it cannot collide. */
export const EMPTY_ENVIRONMENT = 'empty-environment';
const ENVIRONMENT_ID = /^[A-Za-z0-9]{22}$/;
export const isEnvironmentId = (value: string): boolean => ENVIRONMENT_ID.test(value);

/** Metadata keys: 1–64 bytes of `[a-zA-Z0-9._-]`; values: at most 256 bytes of UTF-8 without NUL (contract §0.6). */
const METADATA_KEY = /^[a-zA-Z0-9._-]{1,64}$/;
export const isMetadataKey = (key: string): boolean => METADATA_KEY.test(key);
export const isMetadataValue = (value: string): boolean =>
  Buffer.byteLength(value, 'utf8') <= 256 && !value.includes('\u0000');

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 date-time (`2019-12-27T18:11:19.117Z`, `2026-01-01T00:00:00+02:00`), normalised to upper-case
 * `T`/`Z` so PostgreSQL reads it with its full (microsecond) precision; undefined when invalid (including
 * impossible dates such as February 30th).
 */
export function normalizeRfc3339(value: string): string | undefined {
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offset = m[8]!;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  if (offset.length === 6 && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59))
    return undefined;
  return `${value.slice(0, 10)}T${value.slice(11, 19)}${m[7] ?? ''}${offset.toUpperCase()}`;
}
