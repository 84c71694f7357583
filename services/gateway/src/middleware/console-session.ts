import type { NextFunction, Request, Response } from 'express';
import { parse as parseCookies } from 'cookie';
import { AppError } from '@conveyor/errors';
import { csrfTokenMatches, type ConsoleSession, type ConsoleSessions } from '../console/console-sessions';
import type { KeyAuthenticator } from '../auth/key-authenticator';

export const SESSION_COOKIE = 'conveyor_console';
export const CSRF_HEADER = 'x-csrf-token';

declare module 'express-serve-static-core' {
  interface Request {
    consoleSession?: { cookieValue: string; session: ConsoleSession };
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const sessionCookieOf = (req: Request): string | undefined =>
  parseCookies(req.header('cookie') ?? '')[SESSION_COOKIE];

/**
 * Browsers send Origin on every cross-origin request and on same-origin POSTs; one from elsewhere is refused
 * before anything else happens (sign-in included, which has no CSRF token yet).
 */
export function requireSameOrigin(req: Request, _res: Response, next: NextFunction): void {
  if (SAFE_METHODS.has(req.method)) return next();
  const origin = req.header('origin');
  let host: string | undefined;
  try {
    host = origin ? new URL(origin).host : undefined;
  } catch {
    host = undefined;
  }
  next(
    host && host === req.header('host')
      ? undefined
      : new AppError('not_authorized', 'Cross-origin console requests are not allowed'),
  );
}

/**
 * The console's counterpart of API-key authentication: the session cookie's API key is authenticated exactly as a
 * Bearer key would be (the same key cache), so the console sees what the key's holder sees through the API. State-changing requests
 * also need the session's CSRF token in X-CSRF-Token (synchronizer token; SameSite=Strict is the second layer).
 */
export function consoleSession(sessions: ConsoleSessions, keys: Pick<KeyAuthenticator, 'authenticate'>) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const cookieValue = sessionCookieOf(req);
    const session = cookieValue ? await sessions.read(cookieValue) : undefined;
    if (!cookieValue || !session)
      return next(new AppError('authentication_required', 'Sign in to the console first'));
    if (!SAFE_METHODS.has(req.method) && !csrfTokenMatches(req.header(CSRF_HEADER), session.csrfToken)) {
      return next(new AppError('not_authorized', 'Missing or wrong CSRF token'));
    }
    const caller = await keys.authenticate(session.apiKey, req.id);
    if (!caller) return next(new AppError('authentication_required', 'Sign in to the console first'));
    req.caller = caller;
    req.consoleSession = { cookieValue, session };
    req.log = req.log.child({ teamId: caller.team_id, principalId: caller.principal_id });
    next();
  };
}
