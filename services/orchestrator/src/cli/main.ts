#!/usr/bin/env node
import { Command, Option } from 'commander';
import { createPrismaClient, migrate, type PrismaClient } from '@conveyor/db';
import { createTeam, createUser, createUserApiKey, revokeApiKey } from '../auth/team-admin';
import { loadCliConfig, type CliConfig } from '../config';
import { seedDev } from './seed-dev';
import { setAgentIdentityLimit } from '../identities/team-identity-limit';
import { setTeamRunRetention } from '../retention/team-run-retention';
import { registerWorkerAndJudgeCommands } from './worker-and-judge-commands';
import { registerApplyCommand } from './apply-command';
import { registerPkiCommands } from './pki-commands';
import { fillFromKeysFile, installationKeysFile } from './installation-keys-env';
import { registerKeyRotationCommands } from './key-rotation-commands';

// Read when a command needs it, so `--help` works whatever the environment holds. Keys left unset come from the
// installation's keys file ($CONVEYOR_DATA_DIR/keys.env, else .conveyor/keys.env from the repository root, where
// `npm run conveyor` runs), said on stderr.
let config: CliConfig | undefined;
const cliConfig = (): CliConfig => {
  if (!config) {
    const file = installationKeysFile(process.env);
    const filled = fillFromKeysFile(process.env, file);
    if (filled.length > 0) console.error(`conveyor: ${filled.join(', ')} not set; using ${file}`);
    config = loadCliConfig();
  }
  return config;
};
const databaseUrl = (): string => cliConfig().DATABASE_URL;
const print = (value: unknown): void => console.log(JSON.stringify(value, null, 2));

async function withDb<T>(fn: (db: PrismaClient) => Promise<T>): Promise<void> {
  const db = createPrismaClient(databaseUrl());
  try {
    print(await fn(db));
  } finally {
    await db.$disconnect();
  }
}

const program = new Command('conveyor').description(
  'Conveyor administration: teams, users, API keys, migrations',
);

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () =>
    print(
      await migrate(databaseUrl(), {
        log: (msg, fields) => console.error(JSON.stringify({ msg, ...fields })),
      }),
    ),
  );

const team = program.command('team').description('manage teams');
team
  .command('create')
  .requiredOption('--name <name>', 'team name')
  .action((opts: { name: string }) => withDb((db) => createTeam(db, opts.name)));
team
  .command('set-identity-limit')
  .description("how many agent identities the team's plan allows (the oldest ones are available)")
  .requiredOption('--team <teamId>', 'team ID')
  .requiredOption('--limit <n>', 'non-negative integer')
  .action((opts: { team: string; limit: string }) =>
    withDb((db) => setAgentIdentityLimit(db, opts.team, Number(opts.limit))),
  );
team
  .command('set-retention')
  .description(
    "days the team's finished runs (transcripts, artifacts, blobs) are kept after their last update; 0 = forever, default = RUN_RETENTION_DAYS",
  )
  .requiredOption('--team <teamId>', 'team ID')
  .requiredOption('--days <n|default>', 'whole days, 0 for forever, or "default"')
  .action((opts: { team: string; days: string }) =>
    withDb((db) =>
      setTeamRunRetention(
        db,
        opts.team,
        opts.days === 'default' ? null : /^\d+$/.test(opts.days) ? Number(opts.days) : NaN,
      ),
    ),
  );

const user = program.command('user').description('manage users');
user
  .command('create')
  .requiredOption('--team <teamId>', 'team ID')
  .requiredOption('--email <email>', 'email address')
  .option('--name <displayName>', 'display name')
  .addOption(
    new Option('--role <role>', 'team role; ADMIN may manage factories, webhooks and secrets')
      .choices(['ADMIN', 'MEMBER'])
      .default('MEMBER'),
  )
  .action((opts: { team: string; email: string; name?: string; role: 'ADMIN' | 'MEMBER' }) =>
    withDb((db) =>
      createUser(db, { teamId: opts.team, email: opts.email, displayName: opts.name, role: opts.role }),
    ),
  );

const key = program.command('key').description('manage API keys (the key is printed once and never stored)');
key
  .command('create')
  .requiredOption('--user <userId>', 'user the key acts as')
  .option('--name <name>', 'label shown in listings', 'cli')
  .action((opts: { user: string; name: string }) =>
    withDb((db) => createUserApiKey(db, { userId: opts.user, name: opts.name })),
  );
key
  .command('revoke')
  .requiredOption('--id <keyId>', 'key ID')
  .action((opts: { id: string }) =>
    withDb(async (db) => ({ id: (await revokeApiKey(db, opts.id)).id, revoked: true })),
  );

program
  .command('seed-dev')
  .description(
    'create the dev team and admin user if missing, a new API key for them, and team secrets of the provider keys in the environment',
  )
  .action(() => withDb((db) => seedDev(db, cliConfig())));

registerWorkerAndJudgeCommands(program, withDb);

registerApplyCommand(program, cliConfig);

registerKeyRotationCommands(registerPkiCommands(program), cliConfig, withDb);

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
