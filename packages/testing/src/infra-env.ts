// Where tests find the real servers: the same variables and defaults as `scripts/infra.sh env` prints.
export const DEFAULT_DATABASE_URL = 'postgresql://conveyor:conveyor@127.0.0.1:5432/conveyor';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_KAFKA_BROKERS = '127.0.0.1:9092';

export interface InfraEnv {
  /** Admin database; test databases are created next to it. */
  databaseUrl: string;
  redisUrl: string;
  /** `KAFKA_BROKERS` split on commas, as kafkajs wants it. */
  kafkaBrokers: string[];
}

export function infraEnv(env: NodeJS.ProcessEnv = process.env): InfraEnv {
  // An empty variable means "unset" (e.g. `DATABASE_URL= npm test`), not "connect to nothing".
  const pick = (name: string, fallback: string) => env[name]?.trim() || fallback;
  return {
    databaseUrl: pick('DATABASE_URL', DEFAULT_DATABASE_URL),
    redisUrl: pick('REDIS_URL', DEFAULT_REDIS_URL),
    kafkaBrokers: pick('KAFKA_BROKERS', DEFAULT_KAFKA_BROKERS)
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
  };
}

const current = infraEnv();
export const DATABASE_URL = current.databaseUrl;
export const REDIS_URL = current.redisUrl;
export const KAFKA_BROKERS = current.kafkaBrokers;
