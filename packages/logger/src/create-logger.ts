import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'secret',
  'password',
  'apiKey',
  '*.secret',
  '*.password',
  '*.apiKey',
  // Signed download tokens, webhook url_tokens and API keys under their wire names.
  'token',
  '*.token',
  'url_token',
  '*.url_token',
  'api_key',
  '*.api_key',
];

/** Structured JSON logs with the service's base fields; credentials never reach the output. */
export function createLogger(
  options: { service: string; version?: string; level?: string },
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service, version: options.version ?? '0.1.0' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}
