import express, { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { AppError } from '@conveyor/errors';
import type { Caller__Output } from '@conveyor/proto';
import type { ConsoleSessions } from '../console/console-sessions';
import { consoleSession, SESSION_COOKIE } from '../middleware/console-session';
import type { KeyAuthenticator } from '../auth/key-authenticator';
import { parseBody } from '../validation';

const signInBody = z.object({ api_key: z.string().trim().min(1).max(512) }).strict();

const whoAmI = (caller: Caller__Output, csrfToken: string) => ({
  team_id: caller.team_id,
  principal_type: caller.principal_type,
  principal_id: caller.principal_id,
  role: caller.role,
  display_name: caller.display_name || null,
  email: caller.email || null,
  csrf_token: csrfToken,
});

/**
 * Console sign-in (docs/console.md): POST an API key, get an HttpOnly, SameSite=Strict cookie scoped to /console;
 * GET tells the page who is signed in and its CSRF token; DELETE signs out.
 */
export function consoleSessionRoutes(deps: {
  keys: Pick<KeyAuthenticator, 'authenticate'>;
  sessions: ConsoleSessions;
  ttlSeconds: number;
}): Router {
  const router = Router();
  const cookieOptions = (req: Request) => ({
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: req.secure,
    path: '/console',
  });

  router.post('/session', express.json({ limit: '4kb' }), async (req, res) => {
    const body = parseBody(signInBody, req.body);
    const caller = await deps.keys.authenticate(body.api_key, req.id);
    if (!caller) throw new AppError('authentication_required', 'A valid API key is required');
    // Run-scoped keys belong to a harness, not to a person.
    if (caller.run_id) throw new AppError('not_authorized', 'Run-scoped keys cannot sign in to the console');
    const { cookieValue, session } = await deps.sessions.create(body.api_key);
    res.cookie(SESSION_COOKIE, cookieValue, { ...cookieOptions(req), maxAge: deps.ttlSeconds * 1000 });
    res.set('Cache-Control', 'no-store');
    res.status(201).json(whoAmI(caller, session.csrfToken));
  });

  const signedIn = consoleSession(deps.sessions, deps.keys);

  router.get('/session', signedIn, (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    res.json(whoAmI(req.caller!, req.consoleSession!.session.csrfToken));
  });

  router.delete('/session', signedIn, async (req: Request, res: Response) => {
    await deps.sessions.destroy(req.consoleSession!.cookieValue);
    res.clearCookie(SESSION_COOKIE, cookieOptions(req));
    res.status(204).end();
  });

  return router;
}
