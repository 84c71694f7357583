import * as r from '../schemas/resource-schemas';
import type { AgentIdentityKey__Output } from '@conveyor/proto';
import { callerOf } from '../middleware/authenticate';
import { createAgentBody, createKeyBody, updateAgentBody } from '../schemas/resource-request-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

function toKeyJson(key: AgentIdentityKey__Output | null): Record<string, unknown> {
  return {
    id: key?.id ?? '',
    name: key?.name ?? '',
    prefix: key?.prefix ?? '',
    created_at: key?.created_at ?? '',
    last_used_at: key?.last_used_at || null,
    expires_at: key?.expires_at || null,
    revoked_at: key?.revoked_at || null,
  };
}

const agent = (json: string) => JSON.parse(json || '{}') as unknown;

/** Agent identities (contract §6) and their API keys (docs/identities.md). */
export const identityEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/agent/identities',
    tag: 'Agent identities',
    summary: 'Create an agent identity',
    success: json(r.agentResponseSchema, 'Created.', 201),
    body: createAgentBody,
    handle: async ({ req, res, body, api }) => {
      const created = await api.call(
        'identities',
        'CreateAgentIdentity',
        { caller: callerOf(req), uid: '', body_json: JSON.stringify(body) },
        req.id,
      );
      res.status(201).json(agent(created.agent_json));
    },
  }),

  // `factory_uid` (SDK-only) is accepted and ignored: the factory API is not enabled (contract §8).
  endpoint({
    method: 'get',
    path: '/agent/identities',
    tag: 'Agent identities',
    summary: 'List agent identities',
    success: json(r.agentIdentityListResponseSchema, "The team's agents."),
    handle: async ({ req, res, api }) => {
      const result = await api.call('identities', 'ListAgentIdentities', { caller: callerOf(req) }, req.id);
      res.json({ agents: result.agents.map((a) => agent(a.agent_json)) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/identities/:uid',
    tag: 'Agent identities',
    summary: 'Retrieve an agent identity',
    success: json(r.agentResponseSchema, 'The agent.'),
    handle: async ({ req, res, api }) => {
      res.json(
        agent(
          (
            await api.call(
              'identities',
              'GetAgentIdentity',
              { caller: callerOf(req), uid: req.params.uid },
              req.id,
            )
          ).agent_json,
        ),
      );
    },
  }),

  endpoint({
    method: 'put',
    path: '/agent/identities/:uid',
    tag: 'Agent identities',
    summary: 'Update an agent identity',
    success: json(r.agentResponseSchema, 'Updated.'),
    body: updateAgentBody,
    handle: async ({ req, res, body, api }) => {
      const updated = await api.call(
        'identities',
        'UpdateAgentIdentity',
        { caller: callerOf(req), uid: req.params.uid, body_json: JSON.stringify(body) },
        req.id,
      );
      res.json(agent(updated.agent_json));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/identities/:uid',
    tag: 'Agent identities',
    summary: 'Delete an agent identity and its API keys',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'identities',
        'DeleteAgentIdentity',
        { caller: callerOf(req), uid: req.params.uid },
        req.id,
      );
      res.status(204).end();
    },
  }),

  endpoint({
    method: 'post',
    path: '/agent/identities/:uid/api-keys',
    tag: 'Agent identities',
    summary: 'Create an API key for an agent',
    success: json(r.createdApiKeySchema, 'Created; `key` is shown this once.', 201),
    body: createKeyBody,
    handle: async ({ req, res, body, api }) => {
      const created = await api.call(
        'identities',
        'CreateAgentIdentityKey',
        {
          caller: callerOf(req),
          uid: req.params.uid,
          name: body.name ?? '',
          expires_at: body.expires_at ?? '',
        },
        req.id,
      );
      res.status(201).json({ ...toKeyJson(created.key), key: created.secret });
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/identities/:uid/api-keys',
    tag: 'Agent identities',
    summary: "List an agent's API keys",
    success: json(r.apiKeyListResponseSchema, 'Keys, without secrets.'),
    handle: async ({ req, res, api }) => {
      const result = await api.call(
        'identities',
        'ListAgentIdentityKeys',
        { caller: callerOf(req), uid: req.params.uid },
        req.id,
      );
      res.json({ api_keys: result.keys.map(toKeyJson) });
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/identities/:uid/api-keys/:keyId',
    tag: 'Agent identities',
    summary: 'Revoke an API key',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'identities',
        'RevokeAgentIdentityKey',
        { caller: callerOf(req), uid: req.params.uid, key_id: req.params.keyId },
        req.id,
      );
      res.status(204).end();
    },
  }),
];
