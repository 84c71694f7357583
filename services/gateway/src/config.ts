import { z } from 'zod';
import { commonEnv, loadConfig, port } from '@conveyor/config';

const schema = z.object({
  ...commonEnv,
  /** Public REST API listen address. */
  HOST: z.string().default('127.0.0.1'),
  PORT: port(8080),
  /** Orchestrator gRPC address. */
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051'),
  /** Deadline for each gRPC call; transparent retries on UNAVAILABLE happen within it. */
  GRPC_DEADLINE_MS: z.coerce.number().int().positive().default(10_000),
  /** Largest JSON body the API accepts (run attachments are base64 and up to 5 per run). */
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(10 * 1024 * 1024),
  /** Base URL users reach this gateway at (links such as `session_link` use it); default: the listen address. */
  PUBLIC_URL: z.string().url().optional(),
  /** Tests: check every JSON response against the OpenAPI document's schema; a mismatch becomes a 500. */
  VALIDATE_RESPONSES: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
});

export type GatewayConfig = z.infer<typeof schema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig(schema, env);

/** Where users reach the gateway: PUBLIC_URL, else the listen address (without a trailing slash). */
export const publicUrl = (config: GatewayConfig, listenPort: number): string =>
  (config.PUBLIC_URL ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${listenPort}`).replace(/\/+$/, '');
