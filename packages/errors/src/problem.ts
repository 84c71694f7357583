import { AppError } from './app-error';
import { outageMessage, outageOf } from './dependency-outage';
import { ERROR_TABLE } from './error-codes';

const TYPE_BASE = 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/';

/** RFC 7807 problem body in the contract's shape (§0.7). */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  error: string;
  detail?: string;
  instance?: string;
  retryable?: boolean;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function toProblem(err: AppError, instance?: string): ProblemBody {
  const info = ERROR_TABLE[err.code];
  const body: ProblemBody = {
    type: TYPE_BASE + err.code,
    title: info.title,
    status: err.httpStatus,
    error: err.message ? `${info.title} (${err.message})` : info.title,
    detail: err.message || undefined,
    retryable: err.retryable,
    ...(err.details ?? {}),
  };
  if (instance) body.instance = instance;
  return body;
}

/**
 * Anything thrown that is not an AppError: a dependency's outage (PostgreSQL, Redis, Kafka or the orchestrator not
 * answering) is the retryable 503 `resource_unavailable`; everything else a generic 500 with no internals leaked.
 */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const dependency = outageOf(err);
  if (dependency)
    return new AppError('resource_unavailable', outageMessage(dependency), {
      cause: err,
      details: { retry_after_seconds: 1 },
    });
  return new AppError('internal_error', 'An unexpected error occurred', { cause: err });
}
