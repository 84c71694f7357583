import { AppError } from '@conveyor/errors';
import type { GitHubApp, Webhook } from '@conveyor/db';
import { ENVIRONMENT_ID, findEnvironmentForCaller } from '../../catalog/environment-access';
import { AppCredentialsRefused, parseAppPrivateKey, verifyApp } from '../../github/github-app-auth';
import { validateGitHubApp, type CreateGitHubAppInput } from '../../integrations/github-apps';
import { githubAppKeyContext } from '../../secrets/secret-cipher';
import type { IntegrationAdapter } from './integration-adapter';

type Input = CreateGitHubAppInput;

/** `github_app`: the App's key is checked with GitHub (GET /app as the App), which also tells its slug. */
export const githubAppAdapter: IntegrationAdapter<
  Input & { key: ReturnType<typeof parseAppPrivateKey> },
  GitHubApp & { webhook: Webhook },
  { slug: string },
  {
    appId: string;
    slug: string;
    botLogin: string;
    environmentId: string | null;
    triggerLabel: string | null;
    repositories: string[];
    allowedUsers: string[];
  },
  { privateKeyCiphertext: Uint8Array<ArrayBuffer>; privateKeyKeyId: string }
> = {
  label: 'GitHub App',
  idPrefix: 'gha',
  credential: 'private_key',
  webhook: { prefix: 'github-app', scheme: 'github', secretField: 'webhook_secret' },
  async parse(ctx, body) {
    const input: Input = {
      name: body.name,
      factory_id: body.factory_id,
      app_id: body.app_id as string,
      private_key: body.private_key as string,
      webhook_secret: body.webhook_secret as string,
      environment_id: (body.environment_id as string | undefined) ?? '',
      trigger_label: (body.trigger_label as string | undefined) ?? '',
      repositories: (body.repositories as string[] | undefined) ?? [],
      allowed_users: (body.allowed_users as string[] | undefined) ?? [],
    };
    validateGitHubApp(input);
    const key = parseAppPrivateKey(input.private_key);
    if (input.environment_id) {
      if (!ENVIRONMENT_ID.test(input.environment_id))
        throw new AppError('invalid_request', 'environment_id must be 22 characters of [A-Za-z0-9]');
      await findEnvironmentForCaller(ctx.db, ctx.caller, input.environment_id);
    }
    return { ...input, key };
  },
  find: (tx, teamId, name) =>
    tx.gitHubApp.findUnique({ where: { teamId_name: { teamId, name } }, include: { webhook: true } }),
  count: (tx, teamId) => tx.gitHubApp.count({ where: { teamId } }),
  storedCredential: (cipher, row) =>
    cipher.decrypt(row.privateKeyCiphertext, row.privateKeyKeyId, githubAppKeyContext(row.id)),
  encrypt(cipher, id, privateKey) {
    const { ciphertext, keyId } = cipher.encrypt(privateKey, githubAppKeyContext(id));
    return { privateKeyCiphertext: new Uint8Array(ciphertext), privateKeyKeyId: keyId };
  },
  recheck: (row, input) => row.appId !== input.app_id,
  async verify(ctx, input) {
    try {
      return await verifyApp(ctx.providers.github, { appId: input.app_id, privateKey: input.key });
    } catch (err) {
      if (err instanceof AppCredentialsRefused)
        throw new AppError(
          'invalid_request',
          `private_key: GitHub refused app_id and private_key: ${err.githubReason}`,
        );
      throw err;
    }
  },
  known: (row) => ({ slug: row.slug }),
  fields: (input, { slug }) => ({
    appId: input.app_id,
    slug,
    botLogin: `${slug}[bot]`,
    environmentId: input.environment_id || null,
    triggerLabel: input.trigger_label || null,
    repositories: input.repositories,
    allowedUsers: input.allowed_users,
  }),
  compare: (row, fields) => ({
    app_id: [row.appId, fields.appId],
    environment_id: [row.environmentId, fields.environmentId],
    trigger_label: [row.triggerLabel, fields.triggerLabel],
    repositories: [row.repositories, fields.repositories],
    allowed_users: [row.allowedUsers, fields.allowedUsers],
  }),
  create: (tx, data) => tx.gitHubApp.create({ data }),
  update: (tx, id, data) => tx.gitHubApp.update({ where: { id }, data }),
};
