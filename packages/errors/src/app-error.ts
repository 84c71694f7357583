import { ERROR_TABLE, type ErrorCode } from './error-codes';

export type ErrorDetails = Record<string, unknown>;

/** The one error type that crosses layers: a stable code, a message for humans, optional structured details. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** Overrides the table's HTTP status where one code covers several (e.g. resource_unavailable 429 vs 503). */
  readonly httpStatus: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: ErrorDetails; httpStatus?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.httpStatus = options.httpStatus ?? ERROR_TABLE[code].http;
  }

  get retryable(): boolean {
    return ERROR_TABLE[this.code].retryable;
  }
}

export const invalidRequest = (message: string, details?: ErrorDetails): AppError =>
  new AppError('invalid_request', message, { details });

/** A 400 blaming one body field (`errors[{path, message}]` as the gateway's validation writes), so a form shows it there. */
export const invalidField = (field: string, message: string): AppError =>
  invalidRequest(message, { errors: [{ path: field, message }] });

export const notFound = (what: string): AppError => new AppError('resource_not_found', `${what} not found`);
