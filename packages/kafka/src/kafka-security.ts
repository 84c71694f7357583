import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import { z } from 'zod';

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');

/**
 * How a service reaches a managed Kafka: TLS and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). Spread into each Kafka
 * client's config schema. All off by default: the local broker is plain text on loopback.
 */
export const kafkaSecurityEnv = {
  KAFKA_SSL: flag(false).describe(
    'TLS to the brokers; the system CAs are trusted unless KAFKA_SSL_CA_FILE names others.',
  ),
  KAFKA_SSL_CA_FILE: z
    .string()
    .optional()
    .describe("KAFKA_SSL: the CA(s) that signed the brokers' certificates (PEM)."),
  KAFKA_SSL_CERT_FILE: z
    .string()
    .optional()
    .describe('KAFKA_SSL: client certificate (PEM) for mutual TLS with the brokers.'),
  KAFKA_SSL_KEY_FILE: z.string().optional().describe('KAFKA_SSL: private key (PEM) of KAFKA_SSL_CERT_FILE.'),
  KAFKA_SSL_REJECT_UNAUTHORIZED: flag(true).describe(
    "Verify the brokers' certificates (turn off only to diagnose, never in production).",
  ),
  KAFKA_SASL_MECHANISM: z
    .enum(['none', 'plain', 'scram-sha-256', 'scram-sha-512'])
    .default('none')
    .describe('SASL authentication to the brokers: `none`, `plain`, `scram-sha-256` or `scram-sha-512`.'),
  KAFKA_SASL_USERNAME: z
    .string()
    .optional()
    .describe('SASL user name (required unless KAFKA_SASL_MECHANISM=none).'),
  KAFKA_SASL_PASSWORD: z
    .string()
    .optional()
    .describe('SASL password (required unless KAFKA_SASL_MECHANISM=none); a secret.'),
};

export type KafkaSecurityConfig = z.infer<z.ZodObject<typeof kafkaSecurityEnv>>;

export interface KafkaSecurityOptions {
  ssl?: ConnectionOptions | boolean;
  sasl?: SASLOptions;
}

export class KafkaSecurityError extends Error {
  override readonly name = 'KafkaSecurityError';
}

/**
 * kafkajs's `ssl` and `sasl` options from the config. Refuses what would leak or silently do nothing: a SASL
 * mechanism without its credentials, PLAIN (the password itself on the wire) without TLS, TLS files without TLS.
 */
export function kafkaSecurityOptions(
  config: KafkaSecurityConfig,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): KafkaSecurityOptions {
  const files = {
    ca: config.KAFKA_SSL_CA_FILE,
    cert: config.KAFKA_SSL_CERT_FILE,
    key: config.KAFKA_SSL_KEY_FILE,
  };
  if (!config.KAFKA_SSL && Object.values(files).some(Boolean))
    throw new KafkaSecurityError('KAFKA_SSL_*_FILE is set but KAFKA_SSL is not true');
  if (Boolean(files.cert) !== Boolean(files.key))
    throw new KafkaSecurityError('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together');
  const options: KafkaSecurityOptions = {};
  if (config.KAFKA_SSL) {
    const tls: ConnectionOptions = { rejectUnauthorized: config.KAFKA_SSL_REJECT_UNAUTHORIZED };
    if (files.ca) tls.ca = [readFile(files.ca)];
    if (files.cert && files.key) Object.assign(tls, { cert: readFile(files.cert), key: readFile(files.key) });
    options.ssl = tls;
  }
  const mechanism = config.KAFKA_SASL_MECHANISM;
  if (mechanism !== 'none') {
    const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = config;
    if (!username || !password)
      throw new KafkaSecurityError(
        `KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`,
      );
    if (mechanism === 'plain' && !config.KAFKA_SSL)
      throw new KafkaSecurityError('KAFKA_SASL_MECHANISM=plain sends the password as is: set KAFKA_SSL=true');
    options.sasl = { mechanism, username, password };
  }
  return options;
}
