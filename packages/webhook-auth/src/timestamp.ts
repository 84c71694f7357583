import { fail, OK, type VerifyResult } from './types';

const UNIX_SECONDS = /^[0-9]{1,12}$/;

/** A decimal integer of Unix seconds; signs, fractions, whitespace and `hello` are malformed (undefined). */
export function parseUnixSeconds(value: string): number | undefined {
  return UNIX_SECONDS.test(value) ? Number(value) : undefined;
}

export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/**
 * Accepts `timestamp` when it is at most `tolerance` away from `now` in either direction (same unit for all
 * three). Written so that NaN, e.g. from an invalid clock, fails closed.
 */
export function checkTimestamp(timestamp: number, now: number, tolerance: number): VerifyResult {
  if (!(now - timestamp <= tolerance)) return fail('timestamp too old');
  if (!(timestamp - now <= tolerance)) return fail('timestamp too far in the future');
  return OK;
}
