import type { Logger } from '@conveyor/logger';
import type { AgentIdentityServiceHandlers } from '@conveyor/proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import type { AgentIdentities } from '../../identities/agent-identities';
import type { IdentityKeys } from '../../identities/identity-keys';

/** AgentIdentityService: identities (contract §6) and their API keys. */
export function identityHandlers({
  identities,
  keys,
  logger,
}: {
  identities: AgentIdentities;
  keys: IdentityKeys;
  logger: Logger;
}): AgentIdentityServiceHandlers {
  return {
    CreateAgentIdentity: unary(logger, 'CreateAgentIdentity', async (req) => ({
      agent_json: await identities.create(requireCaller(req.caller), req.body_json),
    })),
    ListAgentIdentities: unary(logger, 'ListAgentIdentities', async (req) => ({
      agents: (await identities.list(requireCaller(req.caller))).map((agent_json) => ({ agent_json })),
    })),
    GetAgentIdentity: unary(logger, 'GetAgentIdentity', async (req) => ({
      agent_json: await identities.get(requireCaller(req.caller), req.uid),
    })),
    UpdateAgentIdentity: unary(logger, 'UpdateAgentIdentity', async (req) => ({
      agent_json: await identities.update(requireCaller(req.caller), req.uid, req.body_json),
    })),
    DeleteAgentIdentity: unary(logger, 'DeleteAgentIdentity', async (req) => {
      await identities.delete(requireCaller(req.caller), req.uid);
      logger.info({ agentIdentityId: req.uid }, 'agent identity deleted with its keys');
      return {};
    }),
    CreateAgentIdentityKey: unary(logger, 'CreateAgentIdentityKey', async (req) => {
      const created = await keys.create(requireCaller(req.caller), req.uid, req.name, req.expires_at);
      logger.info({ agentIdentityId: req.uid, keyId: created.key?.id }, 'agent identity key created');
      return created;
    }),
    ListAgentIdentityKeys: unary(logger, 'ListAgentIdentityKeys', async (req) => ({
      keys: await keys.list(requireCaller(req.caller), req.uid),
    })),
    RevokeAgentIdentityKey: unary(logger, 'RevokeAgentIdentityKey', async (req) => {
      await keys.revoke(requireCaller(req.caller), req.uid, req.key_id);
      return {};
    }),
  };
}
