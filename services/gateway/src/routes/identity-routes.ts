import { Router } from 'express';
import type { AgentIdentityKey__Output } from '@conveyor/proto';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { parseBody } from '../validation';
import { createAgentBody, createKeyBody, updateAgentBody } from '../schemas/resource-request-schemas';

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

/** Agent identities (contract §6) and their API keys (docs/identities.md). */
export function identityRoutes(api: OrchestratorApi): Router {
  const router = Router();
  const agent = (json: string) => JSON.parse(json || '{}') as unknown;

  router.post('/agent/identities', async (req, res) => {
    const body = parseBody(createAgentBody, req.body);
    const created = await api.call(
      'identities',
      'CreateAgentIdentity',
      { caller: callerOf(req), uid: '', body_json: JSON.stringify(body) },
      req.id,
    );
    res.status(201).json(agent(created.agent_json));
  });

  // `factory_uid` (SDK-only) is accepted and ignored: the factory API is not enabled (contract §8).
  router.get('/agent/identities', async (req, res) => {
    const result = await api.call('identities', 'ListAgentIdentities', { caller: callerOf(req) }, req.id);
    res.json({ agents: result.agents.map((a) => agent(a.agent_json)) });
  });

  router.get('/agent/identities/:uid', async (req, res) => {
    res.json(
      agent(
        (
          await api.call(
            'identities',
            'GetAgentIdentity',
            { caller: callerOf(req), uid: req.params.uid! },
            req.id,
          )
        ).agent_json,
      ),
    );
  });

  router.put('/agent/identities/:uid', async (req, res) => {
    const body = parseBody(updateAgentBody, req.body);
    const updated = await api.call(
      'identities',
      'UpdateAgentIdentity',
      { caller: callerOf(req), uid: req.params.uid!, body_json: JSON.stringify(body) },
      req.id,
    );
    res.json(agent(updated.agent_json));
  });

  router.delete('/agent/identities/:uid', async (req, res) => {
    await api.call(
      'identities',
      'DeleteAgentIdentity',
      { caller: callerOf(req), uid: req.params.uid! },
      req.id,
    );
    res.status(204).end();
  });

  router.post('/agent/identities/:uid/api-keys', async (req, res) => {
    const body = parseBody(createKeyBody, req.body);
    const created = await api.call(
      'identities',
      'CreateAgentIdentityKey',
      {
        caller: callerOf(req),
        uid: req.params.uid!,
        name: body.name ?? '',
        expires_at: body.expires_at ?? '',
      },
      req.id,
    );
    res.status(201).json({ ...toKeyJson(created.key), key: created.secret });
  });

  router.get('/agent/identities/:uid/api-keys', async (req, res) => {
    const result = await api.call(
      'identities',
      'ListAgentIdentityKeys',
      { caller: callerOf(req), uid: req.params.uid! },
      req.id,
    );
    res.json({ api_keys: result.keys.map(toKeyJson) });
  });

  router.delete('/agent/identities/:uid/api-keys/:keyId', async (req, res) => {
    await api.call(
      'identities',
      'RevokeAgentIdentityKey',
      { caller: callerOf(req), uid: req.params.uid!, key_id: req.params.keyId! },
      req.id,
    );
    res.status(204).end();
  });

  return router;
}
