import type { NextFunction, Request, Response } from 'express';
import type { ZodTypeAny } from 'zod';
import { AppError, PROBLEM_CONTENT_TYPE, toProblem } from '@conveyor/errors';
import { problemSchema } from '../schemas/common-schemas';
import { findOperation } from './find-operation';

/** The schema to check against, a problem description, or undefined for the console's own routes (not the API). */
function expectedSchema(req: Request, status: number): ZodTypeAny | string | undefined {
  const requested = req.originalUrl.split('?')[0]!;
  // The web console reaches the API's own routes under /console/api (docs/console.md): checked as their /v1 twins.
  const path = requested.replace(/^\/console\/api\//, '/v1/');
  const op = findOperation(req.method, path);
  if (status === 503 && op?.unavailable) return op.unavailable;
  if (status >= 400) return problemSchema;
  if (!op)
    return requested.startsWith('/console/')
      ? undefined
      : `no operation in the API document for ${req.method} ${path}`;
  if (op.success.status === 302 && op.success.json?.status === status) return op.success.json.schema;
  if (op.success.status !== status) return `status ${status} is not the documented ${op.success.status}`;
  if (!('schema' in op.success)) return `a JSON body where the document promises none`;
  return op.success.schema;
}

/**
 * Test-time guard (VALIDATE_RESPONSES=true, set by @conveyor/testing's startPlatform): every JSON body the gateway
 * sends is checked against the schema the OpenAPI document publishes for that operation and status. A mismatch is
 * logged and turned into a 500, so a handler cannot send what the document does not promise without a test failing.
 */
export function validateResponses() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const send = res.send.bind(res);
    res.send = (body?: unknown) => {
      // JSON and +json media types; not JSON lines (application/x-ndjson, e.g. transcripts), which are downloads.
      const type = String(res.getHeader('content-type') ?? '');
      if (
        !/^application\/([\w.-]+\+)?json\b/.test(type) ||
        (typeof body !== 'string' && !Buffer.isBuffer(body))
      )
        return send(body);
      const expected = expectedSchema(req, res.statusCode);
      if (expected === undefined) return send(body);
      let problem: string | undefined;
      if (typeof expected === 'string') problem = expected;
      else {
        const result = expected.safeParse(JSON.parse(body.toString()));
        if (!result.success)
          problem = result.error.issues
            .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
            .join('; ');
      }
      if (problem === undefined) return send(body);
      req.log?.error({ status: res.statusCode, problem }, 'response does not match the API document');
      const err = new AppError('internal_error', `response does not match the API document: ${problem}`);
      res.status(err.httpStatus).type(PROBLEM_CONTENT_TYPE);
      return send(JSON.stringify(toProblem(err, req.originalUrl.split('?')[0])));
    };
    next();
  };
}
