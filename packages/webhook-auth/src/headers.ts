import type { WebhookHeaders } from './types';

export type HeaderRead = { ok: true; value: string } | { ok: false; reason: string };

export interface ReadHeaderOptions {
  /**
   * The value is an opaque user-chosen string that may itself contain ", ", so a comma-joined duplicate cannot be
   * recognised; an exact comparison of the whole value rejects one anyway.
   */
  opaque?: boolean;
}

// Node joins a repeated header into one value with this separator (arrays only for a few well-known headers).
const JOINED_DUPLICATE = ', ';

/**
 * Reads exactly one value of header `name` (lower case), matching keys case-insensitively. A header that is
 * absent or empty is missing; one that arrives twice (an array, two keys differing in case, or node's
 * comma-joined form) is a failure, because a second value could smuggle in a signature the verifier would pick.
 */
export function readHeader(
  headers: WebhookHeaders,
  name: string,
  options: ReadHeaderOptions = {},
): HeaderRead {
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (typeof value === 'string') values.push(value);
    else values.push(...value);
  }
  const [value, ...rest] = values;
  if (value === undefined || (value === '' && rest.length === 0)) {
    return { ok: false, reason: `missing header ${name}` };
  }
  if (rest.length > 0 || (!options.opaque && value.includes(JOINED_DUPLICATE))) {
    return { ok: false, reason: `duplicated header ${name}` };
  }
  return { ok: true, value };
}

/** True when the header was sent at all, duplicated or not. */
export function hasHeader(headers: WebhookHeaders, name: string): boolean {
  return Object.entries(headers).some(([key, value]) => key.toLowerCase() === name && value !== undefined);
}
