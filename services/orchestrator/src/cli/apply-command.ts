import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { Redis } from 'ioredis';
import { createPrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import { applyDefinitions } from '../definitions/apply-definitions';
import { DEFINITION_KINDS } from '../definitions/definition-files';
import { SecretCipher } from '../secrets/secret-cipher';
import { WebhookVersions } from '../webhooks/webhook-versions';
import type { CliConfig } from '../config';
import { providerApis } from '../wiring/adapters';

/** Every `webhooks/*.yaml`, `automations/*.yaml` and `integrations/*.yaml` (or `.yml`) under `dir`, as relative paths and contents. */
export function readDefinitionDir(dir: string): Array<{ path: string; content: string }> {
  const files: Array<{ path: string; content: string }> = [];
  for (const kind of DEFINITION_KINDS) {
    const sub = path.join(dir, kind);
    let names: string[];
    try {
      if (!statSync(sub).isDirectory()) continue;
      names = readdirSync(sub);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      if (!/\.ya?ml$/.test(name)) continue;
      files.push({ path: `${kind}/${name}`, content: readFileSync(path.join(sub, name), 'utf8') });
    }
  }
  return files;
}

/**
 * `conveyor apply <dir> --factory <id>`: the same all-or-nothing apply as `POST /v1/factories/{id}/apply`, run
 * against the database directly (like the other admin commands). It needs the orchestrator's DATABASE_URL,
 * REDIS_URL (to invalidate the ingress's cache), CONVEYOR_SECRETS_KEY (from `.conveyor/keys.env` when unset),
 * WEBHOOK_BASE_URL, and for integrations the providers' URLs (GITHUB_API_URL, SLACK_API_URL, LINEAR_API_URL).
 */
export function registerApplyCommand(program: Command, cliConfig: () => CliConfig): void {
  program
    .command('apply')
    .description(
      'apply webhook, automation and integration definition files (<dir>/webhooks/*.yaml, <dir>/automations/*.yaml, <dir>/integrations/*.yaml) to a factory',
    )
    .argument('<dir>', 'directory holding webhooks/, automations/ and integrations/')
    .requiredOption('--factory <factoryId>', 'factory to apply to')
    .option('--user <userId>', "ADMIN user the definitions are applied as (default: the team's first admin)")
    .action(async (dir: string, opts: { factory: string; user?: string }) => {
      const files = readDefinitionDir(dir);
      if (files.length === 0)
        throw new Error(
          `no definition files under ${DEFINITION_KINDS.map((kind) => path.join(dir, kind)).join(', ')}`,
        );
      const config = cliConfig();
      const db = createPrismaClient(config.DATABASE_URL);
      const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        const factory = await db.factory.findUnique({ where: { id: opts.factory } });
        if (!factory) throw new Error(`factory ${opts.factory} not found`);
        const user = await db.user.findFirst({
          where: { teamId: factory.teamId, ...(opts.user ? { id: opts.user } : { role: 'ADMIN' }) },
          orderBy: { createdAt: 'asc' },
        });
        if (!user)
          throw new Error(
            opts.user
              ? `user ${opts.user} is not a member of the factory's team`
              : "the factory's team has no ADMIN user",
          );
        const caller: Caller = {
          team_id: factory.teamId,
          principal_type: 'USER',
          principal_id: user.id,
          role: user.role,
          api_key_id: '',
          run_id: '',
          display_name: user.displayName,
          email: user.email,
        };
        const result = await applyDefinitions(
          {
            db,
            cipher: SecretCipher.fromConfig(config),
            versions: new WebhookVersions(redis),
            webhookBaseUrl: config.WEBHOOK_BASE_URL,
            providers: providerApis(config),
          },
          caller,
          factory.id,
          files,
        );
        console.log(JSON.stringify(result, null, 2));
      } catch (err) {
        // The AppError's message already joins every error on one line; the CLI prints them one per line instead.
        if (err instanceof AppError && Array.isArray(err.details?.errors)) {
          throw new Error(
            `Definitions not applied:\n${(err.details.errors as Array<{ file: string; message: string }>).map((e) => `  ${e.file}: ${e.message}`).join('\n')}`,
          );
        }
        throw err;
      } finally {
        await db.$disconnect();
        redis.disconnect();
      }
    });
}
