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

/** For every route except the few public ones. */
export function requireAuth(req: Request, _res: Response, next: NextFunction): void {
  next(req.caller ? undefined : new AppError('authentication_required', 'A valid API key is required'));
}

export function callerOf(req: Request): Caller__Output {
  if (!req.caller) throw new AppError('authentication_required', 'A valid API key is required');
  return req.caller;
}
