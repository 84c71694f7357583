import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

export type DbClient = PrismaClient;

/** Prisma Client on the `pg` driver adapter: no Rust engines, one pg pool per client. Call `$disconnect()` to close it. */
export function createPrismaClient(databaseUrl: string): DbClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}
