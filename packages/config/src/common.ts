import { z } from 'zod';

/** Variables every service shares; each service extends this in its own `src/config.ts`. */
export const commonEnv = {
  NODE_ENV: z
    .enum(['development', 'test', 'production'])
    .default('development')
    .describe(
      "`production` requires the orchestrator's DEFAULT_HARNESS (no silent demo runs); libraries such as express read it too.",
    ),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('Lowest level logged (pino, JSON lines on stdout).'),
  SHUTDOWN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      'How long stop() may drain in-flight work before connections are closed regardless (the runner: how long ' +
        'runs it cannot hand over, demo/command runs and runs in setup, may finish; deploy/README.md "Upgrading").',
    ),
};

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** Comma-separated list, trimmed, empty items dropped. */
export const csv = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    );

/**
 * Mutual TLS of the internal gRPC (docs/service-trust.md): the installation CA and this service's certificate and
 * key, PEM files issued by `conveyor pki init`. No default: a service never talks plain text to the core.
 */
export const grpcTlsEnv = {
  GRPC_TLS_CA_FILE: z
    .string({ required_error: 'required: the installation CA (PEM), see `conveyor pki init`' })
    .min(1)
    .describe(
      "Internal gRPC mutual TLS: the installation CA (PEM) every peer's certificate must chain to (`conveyor pki init`).",
    ),
  GRPC_TLS_CERT_FILE: z
    .string({ required_error: "required: this service's certificate (PEM), see `conveyor pki init`" })
    .min(1)
    .describe("Internal gRPC mutual TLS: this service's certificate (PEM), issued by the installation CA."),
  GRPC_TLS_KEY_FILE: z
    .string({ required_error: "required: this service's private key (PEM), see `conveyor pki init`" })
    .min(1)
    .describe("Internal gRPC mutual TLS: this service's private key (PEM)."),
};
