import { AppError } from '@conveyor/errors';
import type { LinearIntegration, Webhook } from '@conveyor/db';
import {
  validateLinearIntegration,
  type CreateLinearIntegrationInput,
} from '../../integrations/linear/linear-integrations';
import { LinearCredentialsRefused, viewer } from '../../linear/linear-graphql';
import { linearKeyContext } from '../../secrets/secret-cipher';
import type { IntegrationAdapter } from './integration-adapter';

type Input = CreateLinearIntegrationInput;

/** A JSON map's entries in key order (jsonb keeps keys in its own order). */
const sorted = (value: unknown): unknown =>
  value && typeof value === 'object' ? Object.entries(value).sort(([a], [b]) => a.localeCompare(b)) : value;

/**
 * `linear`: the API key is checked with Linear (`viewer`). The agent's user is the key's own unless named; its
 * name (for mentions) is known only for the key's own user, so naming another user asks Linear again.
 */
export const linearAdapter: IntegrationAdapter<
  Input,
  LinearIntegration & { webhook: Webhook },
  { id: string; name: string },
  {
    agentUserId: string;
    agentName: string;
    environmentId: string | null;
    triggerLabel: string | null;
    teamRepositories: Record<string, string>;
    prOpenedStateId: string | null;
    runEndedStateId: string | null;
  },
  { apiKeyCiphertext: Uint8Array<ArrayBuffer>; apiKeyKeyId: string }
> = {
  label: 'Linear integration',
  idPrefix: 'lin',
  credential: 'api_key',
  webhook: { prefix: 'linear', scheme: 'linear', secretField: 'webhook_secret' },
  parse(_ctx, body) {
    const input: Input = {
      name: body.name,
      factory_id: body.factory_id,
      api_key: body.api_key as string,
      webhook_secret: body.webhook_secret as string,
      agent_user_id: (body.agent_user_id as string | undefined) ?? '',
      environment_id: (body.environment_id as string | undefined) ?? '',
      trigger_label: (body.trigger_label as string | undefined) ?? '',
      team_repositories: (body.team_repositories as Record<string, string> | undefined) ?? {},
      pr_opened_state_id: (body.pr_opened_state_id as string | undefined) ?? '',
      run_ended_state_id: (body.run_ended_state_id as string | undefined) ?? '',
    };
    validateLinearIntegration(input);
    return input;
  },
  find: (tx, teamId, name) =>
    tx.linearIntegration.findUnique({ where: { teamId_name: { teamId, name } }, include: { webhook: true } }),
  count: (tx, teamId) => tx.linearIntegration.count({ where: { teamId } }),
  storedCredential: (cipher, row) =>
    cipher.decrypt(row.apiKeyCiphertext, row.apiKeyKeyId, linearKeyContext(row.id)),
  encrypt(cipher, id, key) {
    const { ciphertext, keyId } = cipher.encrypt(key, linearKeyContext(id));
    return { apiKeyCiphertext: new Uint8Array(ciphertext), apiKeyKeyId: keyId };
  },
  recheck: (row, input) => (input.agent_user_id || row.agentUserId) !== row.agentUserId,
  async verify(ctx, input) {
    try {
      const me = await viewer(ctx.providers.linear, input.api_key);
      const agentUserId = input.agent_user_id || me.id;
      return { id: agentUserId, name: agentUserId === me.id ? me.name : '' };
    } catch (err) {
      if (err instanceof LinearCredentialsRefused)
        throw new AppError('invalid_request', `api_key: Linear refused api_key: ${err.linearReason}`);
      throw err;
    }
  },
  known: (row) => ({ id: row.agentUserId, name: row.agentName }),
  fields: (input, agent) => ({
    agentUserId: agent.id,
    agentName: agent.name,
    environmentId: input.environment_id || null,
    triggerLabel: input.trigger_label || null,
    teamRepositories: input.team_repositories,
    prOpenedStateId: input.pr_opened_state_id || null,
    runEndedStateId: input.run_ended_state_id || null,
  }),
  compare: (row, fields) => ({
    agent_user_id: [row.agentUserId, fields.agentUserId],
    environment_id: [row.environmentId, fields.environmentId],
    trigger_label: [row.triggerLabel, fields.triggerLabel],
    team_repositories: [sorted(row.teamRepositories), sorted(fields.teamRepositories)],
    pr_opened_state_id: [row.prOpenedStateId, fields.prOpenedStateId],
    run_ended_state_id: [row.runEndedStateId, fields.runEndedStateId],
  }),
  create: (tx, data) => tx.linearIntegration.create({ data }),
  update: (tx, id, data) => tx.linearIntegration.update({ where: { id }, data }),
};
