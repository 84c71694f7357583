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
  /** Console sign-in sessions live here (docs/console.md). */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** How long a console session lasts after sign-in. */
  CONSOLE_SESSION_TTL_SECONDS: z.coerce.number().int().positive().default(8 * 60 * 60),
});

export type GatewayConfig = z.infer<typeof schema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig(schema, env);
