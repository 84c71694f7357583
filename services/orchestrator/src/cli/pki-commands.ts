import { Option, type Command } from 'commander';
import { dropPreviousKeys, initKeysFile, initPki, rollKeysFile, type RotatableKey } from '@conveyor/pki';

const print = (value: unknown): void => console.log(JSON.stringify(value, null, 2));
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * One-shot setup of an installation's trust material (docs/service-trust.md), idempotent so `npm start`, a compose
 * init container or a Kubernetes Job can run it at every start: the CA and per-service certificates, and the keys.
 */
export function registerPkiCommands(program: Command): Command {
  const pki = program
    .command('pki')
    .description("the installation's certificate authority and service certificates");
  pki
    .command('init')
    .description(
      'create the CA and a certificate per service where missing, reissue ones near expiry or lacking a host',
    )
    .requiredOption('--dir <dir>', 'PKI directory (ca.pem, <service>.pem, <service>-key.pem)')
    .option('--host <name>', 'extra DNS name or IP of the orchestrator (repeatable)', collect, [])
    .option('--renew-within-days <days>', 'reissue certificates expiring within this many days', '30')
    .action(async (opts: { dir: string; host: string[]; renewWithinDays: string }) =>
      print(await initPki(opts.dir, { hosts: opts.host, renewWithinDays: Number(opts.renewWithinDays) })),
    );
  const keys = program.command('keys').description("the installation's signing and encryption keys");
  keys
    .command('init')
    .description('write an env file of fresh random keys unless it exists')
    .requiredOption('--file <file>', 'env file to create (e.g. .conveyor/keys.env)')
    .action(async (opts: { file: string }) => print(await initKeysFile(opts.file)));
  const which = () =>
    new Option('--key <key>', 'secrets (CONVEYOR_SECRETS_KEY) or signing (BLOB_SIGNING_SECRET)')
      .choices(['secrets', 'signing'])
      .makeOptionMandatory();
  keys
    .command('roll')
    .description(
      "rotation's first step in an env file: a fresh key becomes current, the old one is listed as previous",
    )
    .requiredOption('--file <file>', 'the installation keys file (e.g. .conveyor/keys.env)')
    .addOption(which())
    .action(async (opts: { file: string; key: RotatableKey }) =>
      print(await rollKeysFile(opts.file, opts.key)),
    );
  keys
    .command('drop-previous')
    .description("rotation's last step in an env file: the previous keys are no longer accepted")
    .requiredOption('--file <file>', 'the installation keys file')
    .addOption(which())
    .action(async (opts: { file: string; key: RotatableKey }) =>
      print(await dropPreviousKeys(opts.file, opts.key)),
    );
  return keys;
}
