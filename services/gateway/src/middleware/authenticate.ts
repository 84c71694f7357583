import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@conveyor/errors';
import type { Caller__Output } from '@conveyor/proto';
import type { KeyAuthenticator } from '../auth/key-authenticator';

declare module 'express-serve-static-core' {
  interface Request {
    caller?: Caller__Output;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Optional: sets req.caller when a valid key is present, fails on an invalid one, lets anonymous requests through. */
export function identify(keys: KeyAuthenticator) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const header = req.header('authorization');
    if (!header) return next();
    const match = BEARER.exec(header);
    if (!match)
      return next(new AppError('authentication_required', 'Authorization header must be "Bearer <API_KEY>"'));
    try {
      req.caller = await keys.authenticate(match[1]!, req.id);
      if (req.caller)
        req.log = req.log.child({ teamId: req.caller.team_id, principalId: req.caller.principal_id });
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Judge runs submit their verdicts on the run they score: the only run route a run-scoped key may call. */
const RUN_KEY_ROUTES: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: 'POST', path: /^\/harness-support\// },
  { method: 'POST', path: /^\/agent\/runs\/[^/]+\/scores$/ },
];

/**
 * A run-scoped key is handed to code running inside a run's sandbox (docs/sandbox.md): it reaches harness support
 * (which acts on the key's own run) and judge scoring (checked against the judge's run), nothing else — it cannot
 * list, read, create or cancel runs, whatever the role of the principal it acts for.
 */
export function confineRunScopedKeys(req: Request, _res: Response, next: NextFunction): void {
  if (!req.caller?.run_id || RUN_KEY_ROUTES.some((r) => r.method === req.method && r.path.test(req.path)))
    return next();
  next(
    new AppError(
      'not_authorized',
      'A run-scoped key may only call the harness-support endpoints of its own run',
    ),
  );
}

/** For every route except the few public ones. */
export function requireAuth(req: Request, _res: Response, next: NextFunction): void {
  next(req.caller ? undefined : new AppError('authentication_required', 'A valid API key is required'));
}

export function callerOf(req: Request): Caller__Output {
  if (!req.caller) throw new AppError('authentication_required', 'A valid API key is required');
  return req.caller;
}
