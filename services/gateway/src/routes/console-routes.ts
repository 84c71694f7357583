import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import helmet from 'helmet';
import { notFoundHandler } from '@conveyor/runtime';
import type { Redis } from 'ioredis';
import { ConsoleSessions } from '../console/console-sessions';
import { consoleSession, requireSameOrigin } from '../middleware/console-session';
import type { KeyAuthenticator } from '../auth/key-authenticator';
import type { OrchestratorApi } from '../orchestrator-api';
import { consoleSessionRoutes } from './console-session-routes';
import { runEventStreamRoutes } from './run-event-stream-routes';

/** The built front end (packages/console-ui, bundled by esbuild during `npm run build`). */
const ASSETS_DIR = path.join(path.dirname(require.resolve('@conveyor/console-ui/package.json')), 'dist');

/**
 * Everything the page loads comes from this origin; no inline script or style, no framing. Forms post here, and to
 * GitHub's web pages only for creating a GitHub App from its manifest (docs/integrations.md).
 */
const securityHeaders = (githubWebUrl: string) =>
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'", new URL(githubWebUrl).origin],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
  });

/**
 * The web console under /console (docs/console.md): the single-page app, its sign-in session, the live event
 * stream of a run, and the REST API itself under /console/api, reached with the session cookie instead of a
 * Bearer key (`v1` is the API's own router, so the console can do exactly what the API allows).
 */
export function consoleRoutes(deps: {
  api: OrchestratorApi;
  keys: KeyAuthenticator;
  redis: Redis;
  sessionTtlSeconds: number;
  /** GitHub's web pages (GITHUB_WEB_URL), where the integrations page posts a GitHub App's manifest. */
  githubWebUrl: string;
  v1: RequestHandler;
}): Router {
  const sessions = new ConsoleSessions(deps.redis, deps.sessionTtlSeconds);
  const router = Router();
  router.use(securityHeaders(deps.githubWebUrl));

  const api = Router();
  api.use(requireSameOrigin);
  api.use(consoleSessionRoutes({ keys: deps.keys, sessions, ttlSeconds: deps.sessionTtlSeconds }));
  api.use(consoleSession(sessions, deps.keys));
  api.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  api.use(runEventStreamRoutes(deps.api));
  api.use(deps.v1);
  api.use(notFoundHandler);
  router.use('/api', api);

  // Bundles are rebuilt in place, so the browser revalidates them instead of caching blindly.
  router.use(express.static(ASSETS_DIR, { index: false, cacheControl: true, maxAge: 0 }));
  // Every other path is a page of the single-page app (e.g. /console/runs/<run_id>, the API's session_link).
  router.get(/.*/, (_req, res) => {
    res.set('Cache-Control', 'no-store');
    res.sendFile(path.join(ASSETS_DIR, 'index.html'));
  });
  return router;
}
