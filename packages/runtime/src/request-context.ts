import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { redactUrl, type Logger } from '@conveyor/logger';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an ID (honouring a sane incoming X-Request-Id), a child logger, and one access-log line
 * (whose path has its credentials redacted: signed download tokens, url_tokens).
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.header('x-request-id');
    req.id = incoming && SAFE_ID.test(incoming) ? incoming : randomUUID();
    req.log = logger.child({ requestId: req.id });
    res.setHeader('X-Request-Id', req.id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (req.path === '/healthz' || req.path.startsWith('/readyz')) return;
      req.log.info(
        {
          method: req.method,
          path: redactUrl(req.originalUrl.split('?')[0]!),
          status: res.statusCode,
          durationMs,
        },
        'request',
      );
    });
    next();
  };
}
