import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

export type DbClient = PrismaClient;

/**
 * Prisma Client on the `pg` driver adapter: no Rust engines, one pg pool per client. Call `$disconnect()` to close it.
 * JIT is off for these sessions: PostgreSQL compiles any statement whose estimated cost passes `jit_above_cost`, and
 * for the platform's short statements the compile is the cost (the event dispatcher's claim, estimated high but
 * running in ~10 ms, spent ~250 ms compiling each pass: docs/events.md).
 */
export function createPrismaClient(databaseUrl: string): DbClient {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, options: '-c jit=off' }),
  });
}
