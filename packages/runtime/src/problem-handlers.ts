import type { NextFunction, Request, Response } from 'express';
import { AppError, asAppError, PROBLEM_CONTENT_TYPE, toProblem } from '@conveyor/errors';
import { redactUrl } from '@conveyor/logger';

export function sendProblem(req: Request, res: Response, err: AppError): void {
  if (err.code === 'rate_limited' || err.code === 'resource_unavailable') {
    const retryAfter = err.details?.retry_after_seconds;
    if (typeof retryAfter === 'number')
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
  }
  res
    .status(err.httpStatus)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblem(err, redactUrl(req.originalUrl.split('?')[0]!))));
}

/** Unknown routes answer 404 in the contract's error shape. */
export function notFoundHandler(req: Request, res: Response): void {
  sendProblem(req, res, new AppError('resource_not_found', `No route for ${req.method} ${req.path}`));
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** The one place errors become HTTP responses: typed errors keep their status, anything else is a logged 500. */
export function errorHandler() {
  // express recognises error middleware by arity, so all four parameters must stay.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const parserError = err as BodyParserError;
    let appError: AppError;
    if (parserError?.type === 'entity.parse.failed') {
      appError = new AppError('invalid_request', 'Request body is not valid JSON');
    } else if (parserError?.type === 'entity.too.large') {
      appError = new AppError('payload_too_large', 'Request body is too large');
    } else {
      appError = asAppError(err);
    }
    if (appError.code === 'internal_error') req.log?.error({ err }, 'unhandled error');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendProblem(req, res, appError);
  };
}
