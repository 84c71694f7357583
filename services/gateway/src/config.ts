import { z } from 'zod';
import { commonEnv, grpcTlsEnv, loadConfig, port } from '@conveyor/config';

const schema = z.object({
  ...commonEnv,
  /** Public REST API listen address. */
  HOST: z.string().default('127.0.0.1'),
  PORT: port(8080),
  /** Orchestrator gRPC address. */
  ORCHESTRATOR_ADDR: z.string().default('127.0.0.1:50051'),
  /** Mutual TLS to the orchestrator: the installation CA and this service's certificate and key. */
  ...grpcTlsEnv,
  /** Deadline for each gRPC call; transparent retries on UNAVAILABLE happen within it. */
  GRPC_DEADLINE_MS: z.coerce.number().int().positive().default(10_000),
  /** Largest JSON body the API accepts (run attachments are base64 and up to 5 per run). */
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(10 * 1024 * 1024),
});

export type GatewayConfig = z.infer<typeof schema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig(schema, env);
