import { z } from 'zod';

/**
 * TRUST_PROXY of an HTTP edge: whose X-Forwarded-For is believed when deciding a client's address (express "trust
 * proxy": `true`, `false`, a hop count, or comma-separated addresses/subnets/`loopback`/`linklocal`/`uniquelocal`).
 * Nobody by default: every pod of a cluster has a private address, and a client believed there picks its own
 * address (and with it its rate budget); a deployment names its proxy.
 */
export const trustProxy = z.string().default('false');

/** Express's "trust proxy" value from TRUST_PROXY. */
export function trustProxySetting(value: string): boolean | number | string[] {
  const trimmed = value.trim();
  if (trimmed === 'true') return true;
  if (trimmed === 'false' || trimmed === '') return false;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  return trimmed
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
