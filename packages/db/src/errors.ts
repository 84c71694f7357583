export type MigrationErrorCode =
  /** An applied migration's file was edited afterwards: the database no longer matches the files. */
  | 'CHECKSUM_MISMATCH'
  /** `_prisma_migrations` records an unfinished attempt (e.g. by `prisma migrate deploy`); resolve it first. */
  | 'UNFINISHED_MIGRATION'
  /** A migration's SQL failed; its transaction was rolled back, so nothing of it remains. */
  | 'MIGRATION_FAILED';

export class MigrationError extends Error {
  override readonly name = 'MigrationError';

  constructor(
    readonly code: MigrationErrorCode,
    readonly migrationName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
