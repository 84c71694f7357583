// The generated client (models, enums, `Prisma` namespace, `PrismaClient`) is built from prisma/schema.prisma.
export * from './generated/prisma/client';
export { createPrismaClient, sqlPool, type DbClient } from './client';
export { migrate, migrationsDir, type MigrateLog, type MigrateOptions, type MigrateResult } from './migrator';
export { readMigrations, migrationsChecksum, type MigrationFile } from './migration-files';
export { MigrationError, type MigrationErrorCode } from './errors';
export { newId, newEnvironmentId, newUuid, randomAlphanumeric } from './ids';
export { ChannelListener, type ChannelListenerOptions } from './channel-listener';
