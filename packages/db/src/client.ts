import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client';

export type DbClient = PrismaClient;

/** The pg pool under each client, for the few hot-path statements written as plain SQL (sqlPool). */
const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * Prisma Client on the `pg` driver adapter: no Rust engines, one pg pool per client, shared with sqlPool(). Call
 * `$disconnect()` to close it (the pool closes with it). JIT is off for these sessions: PostgreSQL compiles any
 * statement whose estimated cost passes `jit_above_cost`, and for the platform's short statements the compile is the
 * cost (the event dispatcher's claim, estimated high but running in ~10 ms, spent ~250 ms compiling each pass:
 * docs/events.md).
 */
export function createPrismaClient(databaseUrl: string): DbClient {
  const pool = new pg.Pool({ connectionString: databaseUrl, options: '-c jit=off' });
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(client, pool);
  return client;
}

/**
 * The client's own pg pool. A statement sent here costs a third of the same statement through Prisma (measured:
 * 0.09 vs 0.27 ms of CPU for `$queryRaw`, more for a model query), so the per-run hot path (runner calls) uses it;
 * everything else goes through Prisma. Same connections, same database: the Prisma schema and its migrations remain
 * the only definition of the tables.
 */
export function sqlPool(client: PrismaClient): pg.Pool {
  const pool = pools.get(client);
  if (!pool) throw new Error('sqlPool: the client was not made by createPrismaClient');
  return pool;
}
