import { AppError } from '@conveyor/errors';
import { EgressRefusedError } from '../egress/egress-policy';

/**
 * What an event-delivery attempt reports as its `error` (GET /v1/event-endpoints/{id}/attempts, readable by members):
 * a stable class, never the driver's text. Raw errors say what answers on an address and port (a TLS alert, a
 * protocol mismatch, an internal address a name resolved to), which would let an endpoint map internal services.
 */
export const ATTEMPT_ERRORS = {
  timeout: 'timeout',
  refused: 'connection refused',
  reset: 'connection reset',
  dns: 'dns failure',
  unreachable: 'host unreachable',
  tls: 'tls failure',
  egress: 'egress refused',
  invalidUrl: 'invalid url',
  other: 'connection failed',
} as const;

export type AttemptError = (typeof ATTEMPT_ERRORS)[keyof typeof ATTEMPT_ERRORS];

/** A receiver's answer that is no success: `HTTP 503`, or 410's meaning. */
export function statusError(status: number): string {
  return `HTTP ${status}${status === 410 ? ' (Gone: the endpoint was disabled)' : ''}`;
}

const BY_CODE: Record<string, AttemptError> = {
  ECONNREFUSED: ATTEMPT_ERRORS.refused,
  ECONNRESET: ATTEMPT_ERRORS.reset,
  EPIPE: ATTEMPT_ERRORS.reset,
  UND_ERR_SOCKET: ATTEMPT_ERRORS.reset,
  UND_ERR_CLOSED: ATTEMPT_ERRORS.reset,
  ENOTFOUND: ATTEMPT_ERRORS.dns,
  EAI_AGAIN: ATTEMPT_ERRORS.dns,
  EHOSTUNREACH: ATTEMPT_ERRORS.unreachable,
  ENETUNREACH: ATTEMPT_ERRORS.unreachable,
  EHOSTDOWN: ATTEMPT_ERRORS.unreachable,
  EADDRNOTAVAIL: ATTEMPT_ERRORS.unreachable,
  ETIMEDOUT: ATTEMPT_ERRORS.timeout,
  UND_ERR_CONNECT_TIMEOUT: ATTEMPT_ERRORS.timeout,
  UND_ERR_HEADERS_TIMEOUT: ATTEMPT_ERRORS.timeout,
  UND_ERR_BODY_TIMEOUT: ATTEMPT_ERRORS.timeout,
  // A TLS handshake with something that does not speak TLS (`wrong version number`).
  EPROTO: ATTEMPT_ERRORS.tls,
};

/** Node's TLS and OpenSSL's certificate-verification codes. */
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|ERR_OSSL_)/;

/** The first known code along the cause chain (duck-typed: errors from node's internals may be of another realm). */
function codeOf(err: unknown): string | undefined {
  for (
    let e: unknown = err, depth = 0;
    typeof e === 'object' && e !== null && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (code in BY_CODE || TLS_CODE.test(code))) return code;
  }
  return undefined;
}

/** The class of an attempt that got no answer: `timedOut` when the attempt's own deadline ended it. */
export function classifySendError(err: unknown, timedOut: boolean): AttemptError {
  if (timedOut) return ATTEMPT_ERRORS.timeout;
  const code = codeOf(err);
  if (code === undefined) return ATTEMPT_ERRORS.other;
  return BY_CODE[code] ?? ATTEMPT_ERRORS.tls;
}

/** The class of an endpoint the dispatcher would not call: its URL, its name, or the egress policy refused it. */
export function classifyRouteError(err: unknown): AttemptError {
  if (err instanceof EgressRefusedError)
    return err.reason === 'unresolvable' ? ATTEMPT_ERRORS.dns : ATTEMPT_ERRORS.egress;
  if (err instanceof AppError && err.code === 'invalid_request') return ATTEMPT_ERRORS.invalidUrl;
  return ATTEMPT_ERRORS.other;
}
