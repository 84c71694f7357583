import { Router } from 'express';
import { z } from 'zod';
import type { AgentIdentityKey__Output } from '@conveyor/proto';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { agentConfigSchema } from '../schemas/agent-config';
import { parseBody } from '../validation';

const agentType = z.enum(['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM']);
const configShape = agentConfigSchema.innerType().shape;
const secrets = z
  .array(z.object({ name: z.string().min(1).max(128) }).passthrough())
  .max(100)
  .refine((s) => new Set(s.map((x) => x.name)).size === s.length, 'duplicate secret names');
const attachedStores = z
  .array(
    z
      .object({
        uid: z.string().min(1),
        access: z.enum(['read_write', 'read_only']),
        instructions: z.string().min(1),
      })
      .strict(),
  )
  .max(20)
  .refine((s) => new Set(s.map((x) => x.uid)).size === s.length, 'duplicate memory store uids');
// A normalized skill spec: `owner/repo:path` (contract §0.6).
const skillSpec = z
  .string()
  .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+:.+$/, 'must be a skill spec owner/repo:path');

/** Fields shared by CreateAgent and UpdateAgent (contract §6.2); every one may be null (= unset / unchanged). */
const common = {
  description: z.string().max(2000).nullable(),
  prompt: z.string().max(200_000).nullable(),
  agent_type: agentType.nullable(),
  base_model: z.string().max(128).nullable(),
  base_harness: z.string().max(64).nullable(),
  harness: configShape.harness.unwrap().nullable(),
  harness_auth_secrets: configShape.harness_auth_secrets.unwrap().nullable(),
  inference_providers: z.record(z.unknown()).nullable(),
  mcp_servers: configShape.mcp_servers.unwrap().nullable(),
  environment_id: z.string().max(64).nullable(),
  default_runner_uid: z.string().max(200).nullable(),
  worker_host: z.string().max(200).nullable(),
  credential_strategy: z.enum(['CREATOR', 'EXECUTOR']).nullable(),
  on_behalf_of_enabled: z.boolean().nullable(),
  secrets: secrets.nullable(),
  skills: z.array(skillSpec).max(100).nullable(),
};

export const createAgentBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    ...common,
    factory_uid: z.string().max(200).nullable(),
    memory: z
      .object({
        attached_stores: attachedStores.optional(),
        auto_memory: z.object({ enabled: z.boolean().optional() }).strict().optional(),
      })
      .strict()
      .nullable(),
  })
  .partial()
  .required({ name: true })
  .strict();

export const updateAgentBody = z
  .object({
    name: z.string().trim().min(1).max(200).nullable(),
    ...common,
    memory: z.object({ attached_stores: attachedStores.nullable().optional() }).strict().nullable(),
  })
  .partial()
  .strict();

export const createKeyBody = z
  .object({
    name: z.string().trim().max(128).optional(),
    expires_at: z.string().datetime({ offset: true }).optional(),
  })
  .strict();

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
