import { InvalidArgumentError, type Command } from 'commander';
import type { PrismaClient } from '@conveyor/db';
import type { CliConfig } from '../config';
import { SecretCipher } from '../secrets/secret-cipher';
import { reencryptSecrets, sealedKeyStatus } from '../secrets/reencrypt-secrets';

type WithDb = <T>(fn: (db: PrismaClient) => Promise<T>) => Promise<void>;

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new InvalidArgumentError('an integer from 1 to 10000');
  return n;
};

/**
 * Finishing a CONVEYOR_SECRETS_KEY rotation (docs/operations.md): `rotate` re-encrypts every stored value under the
 * current key, `status` counts the values each key still seals, so an operator knows when the old key may go.
 */
export function registerKeyRotationCommands(keys: Command, cliConfig: () => CliConfig, withDb: WithDb): void {
  keys
    .command('rotate')
    .description(
      're-encrypt every stored secret under CONVEYOR_SECRETS_KEY (reading old ones with CONVEYOR_SECRETS_PREVIOUS_KEYS); idempotent, resumable',
    )
    .option('--batch-size <n>', 'rows read per round trip', positiveInt, 500)
    .action((opts: { batchSize: number }) =>
      withDb(async (db) => {
        const cipher = SecretCipher.fromConfig(cliConfig());
        const columns = await reencryptSecrets(db, cipher, {
          batchSize: opts.batchSize,
          onProgress: (p) => console.error(JSON.stringify({ msg: 'keys rotate progress', ...p })),
        });
        // Undecryptable rows are listed (IDs and key ids only) and fail the command; everything else went through.
        if (columns.some((c) => c.failed.length > 0)) process.exitCode = 1;
        return { columns, ...(await sealedKeyStatus(db, cipher)) };
      }),
    );
  keys
    .command('status')
    .description('how many stored secrets each key encrypted, and the current key id')
    .action(() => withDb((db) => sealedKeyStatus(db, SecretCipher.fromConfig(cliConfig()))));
}
