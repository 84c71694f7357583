import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@conveyor/errors';

/** True when any string in the value (keys included) holds U+0000. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value && typeof value === 'object')
    return Object.entries(value).some(([key, v]) => key.includes('\u0000') || holdsNul(v));
  return false;
}

/**
 * PostgreSQL text cannot hold U+0000, so a body or query carrying it would fail deep in the orchestrator as a 500
 * (found by Schemathesis): refuse it here, once, with a 400 that says why.
 */
export function rejectNulCharacters(req: Request, _res: Response, next: NextFunction): void {
  if (holdsNul(req.body) || holdsNul(req.query) || holdsNul(req.params)) {
    next(
      new AppError('invalid_request', 'Strings in the request may not contain the NUL character (U+0000)'),
    );
    return;
  }
  next();
}
