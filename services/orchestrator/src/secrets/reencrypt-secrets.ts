import { Prisma, type PrismaClient } from '@conveyor/db';
import {
  eventEndpointSecretContext,
  githubAppKeyContext,
  linearKeyContext,
  runLeaseContext,
  SecretCipherError,
  slackAppTokenContext,
  teamSecretContext,
  webhookSecretContext,
  type SecretCipher,
} from './secret-cipher';

/** A row's ciphertext as read for re-encryption: its ID, the sealed bytes, the key that sealed them, its context. */
interface SealedRow {
  id: string;
  ciphertext: Uint8Array;
  keyId: string;
  context: string;
}

/**
 * One encrypted column and the column naming its key. Every value the orchestrator seals with `SecretCipher` lives in
 * one of these; `reencrypt-secrets.int.test.ts` fails when the schema gains a `Bytes` column beside a `…KeyId` or
 * `keyId` column that this list lacks.
 */
interface SealedColumn {
  table: string;
  ciphertext: string;
  keyId: string;
  /** The columns the associated data is built from, besides `id`. */
  extra: readonly string[];
  context(row: Record<string, string>): string;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'TeamSecret',
    ciphertext: 'ciphertext',
    keyId: 'keyId',
    extra: ['teamId', 'name'],
    context: (r) => teamSecretContext(r.teamId!, r.name!),
  },
  {
    table: 'Webhook',
    ciphertext: 'secretCiphertext',
    keyId: 'secretKeyId',
    extra: [],
    context: (r) => webhookSecretContext(r.id!),
  },
  {
    table: 'EventEndpoint',
    ciphertext: 'secretCiphertext',
    keyId: 'secretKeyId',
    extra: [],
    context: (r) => eventEndpointSecretContext(r.id!),
  },
  {
    table: 'EventEndpoint',
    ciphertext: 'previousCiphertext',
    keyId: 'previousKeyId',
    extra: [],
    context: (r) => eventEndpointSecretContext(r.id!),
  },
  {
    table: 'GitHubApp',
    ciphertext: 'privateKeyCiphertext',
    keyId: 'privateKeyKeyId',
    extra: [],
    context: (r) => githubAppKeyContext(r.id!),
  },
  {
    table: 'SlackApp',
    ciphertext: 'botTokenCiphertext',
    keyId: 'botTokenKeyId',
    extra: [],
    context: (r) => slackAppTokenContext(r.id!),
  },
  {
    table: 'LinearIntegration',
    ciphertext: 'apiKeyCiphertext',
    keyId: 'apiKeyKeyId',
    extra: [],
    context: (r) => linearKeyContext(r.id!),
  },
  {
    table: 'RunLease',
    ciphertext: 'recordCiphertext',
    keyId: 'recordKeyId',
    extra: ['runId'],
    context: (r) => runLeaseContext(r.runId!),
  },
];

const label = (c: SealedColumn): string => `${c.table}.${c.ciphertext}`;
// Identifiers come from the constant list above, never from input.
const ident = (name: string): Prisma.Sql => Prisma.raw(`"${name}"`);

async function readBatch(
  db: PrismaClient,
  column: SealedColumn,
  currentKeyId: string,
  afterId: string,
  take: number,
): Promise<SealedRow[]> {
  const extra =
    column.extra.length > 0 ? Prisma.sql`, ${Prisma.join(column.extra.map(ident))}` : Prisma.empty;
  const rows = await db.$queryRaw<
    Array<Record<string, string> & { sealed: Uint8Array; sealedKeyId: string }>
  >`
    SELECT id, ${ident(column.ciphertext)} AS sealed, ${ident(column.keyId)} AS "sealedKeyId" ${extra}
      FROM ${ident(column.table)}
     WHERE ${ident(column.keyId)} IS NOT NULL AND ${ident(column.ciphertext)} IS NOT NULL
       AND ${ident(column.keyId)} <> ${currentKeyId} AND id > ${afterId}
     ORDER BY id
     LIMIT ${take}`;
  return rows.map((r) => ({
    id: r.id!,
    ciphertext: r.sealed,
    keyId: r.sealedKeyId,
    context: column.context(r),
  }));
}

/**
 * Compare-and-set: the row is replaced only if it still holds the ciphertext that was read, so a value written
 * meanwhile (by the API, under whichever key) is never overwritten with a stale one. `updatedAt` is left alone: the
 * value did not change.
 */
async function replace(
  db: PrismaClient,
  column: SealedColumn,
  row: SealedRow,
  next: { ciphertext: Buffer; keyId: string },
): Promise<boolean> {
  const updated = await db.$executeRaw`
    UPDATE ${ident(column.table)}
       SET ${ident(column.ciphertext)} = ${next.ciphertext}, ${ident(column.keyId)} = ${next.keyId}
     WHERE id = ${row.id} AND ${ident(column.keyId)} = ${row.keyId}
       AND ${ident(column.ciphertext)} = ${Buffer.from(row.ciphertext)}`;
  return updated === 1;
}

export interface ColumnReport {
  column: string;
  reencrypted: number;
  /** Changed by someone else between read and write; their value stands (rerun to pick it up if still old). */
  changedMeanwhile: number;
  /** Rows whose key is not configured or whose ciphertext does not authenticate: left as they are. */
  failed: Array<{ id: string; keyId: string; reason: string }>;
}

export interface ReencryptOptions {
  /** Rows read and rewritten per round trip (each row is its own statement, so no long transaction). */
  batchSize: number;
  onProgress?: (progress: { column: string; reencrypted: number; failed: number }) => void;
}

/**
 * Re-encrypts every sealed value not under the cipher's current key with that key, in batches of `batchSize` by
 * ascending ID. Idempotent and resumable: values already under the current key are never read, so a rerun after an
 * interruption continues where it stopped. Plaintexts never leave this function.
 */
export async function reencryptSecrets(
  db: PrismaClient,
  cipher: SecretCipher,
  options: ReencryptOptions,
): Promise<ColumnReport[]> {
  const reports: ColumnReport[] = [];
  for (const column of SEALED_COLUMNS) {
    const report: ColumnReport = { column: label(column), reencrypted: 0, changedMeanwhile: 0, failed: [] };
    let afterId = '';
    for (;;) {
      const batch = await readBatch(db, column, cipher.keyId, afterId, options.batchSize);
      for (const row of batch) {
        let plaintext: string;
        try {
          plaintext = cipher.decrypt(row.ciphertext, row.keyId, row.context);
        } catch (err) {
          if (!(err instanceof SecretCipherError)) throw err;
          report.failed.push({ id: row.id, keyId: row.keyId, reason: err.message });
          continue;
        }
        if (await replace(db, column, row, cipher.encrypt(plaintext, row.context))) report.reencrypted++;
        else report.changedMeanwhile++;
      }
      if (batch.length > 0) {
        afterId = batch[batch.length - 1]!.id;
        options.onProgress?.({
          column: report.column,
          reencrypted: report.reencrypted,
          failed: report.failed.length,
        });
      }
      if (batch.length < options.batchSize) break;
    }
    reports.push(report);
  }
  return reports;
}

export interface SealedKeyStatus {
  currentKeyId: string;
  /** How many stored values each key sealed, per column. */
  census: Array<{ column: string; keyId: string; values: number }>;
  /** Keys other than the current one that still seal a value: none left = the previous keys may be dropped. */
  oldKeysStillInUse: string[];
}

export async function sealedKeyStatus(db: PrismaClient, cipher: SecretCipher): Promise<SealedKeyStatus> {
  const census: SealedKeyStatus['census'] = [];
  for (const column of SEALED_COLUMNS) {
    const rows = await db.$queryRaw<Array<{ keyId: string; values: bigint }>>`
      SELECT ${ident(column.keyId)} AS "keyId", count(*) AS values
        FROM ${ident(column.table)}
       WHERE ${ident(column.keyId)} IS NOT NULL
       GROUP BY 1 ORDER BY 1`;
    for (const r of rows) census.push({ column: label(column), keyId: r.keyId, values: Number(r.values) });
  }
  const oldKeysStillInUse = [...new Set(census.map((c) => c.keyId))].filter((k) => k !== cipher.keyId);
  return { currentKeyId: cipher.keyId, census, oldKeysStillInUse };
}
