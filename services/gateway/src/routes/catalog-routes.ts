import { Router } from 'express';
import { z } from 'zod';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toModelJson } from '../mappers/catalog-resources';
import { parseQuery } from '../validation';

// Query booleans are `true`/`false` on the wire (contract §0.4); an empty value (null) counts as false.
const bool = z
  .enum(['true', 'false', ''])
  .optional()
  .transform((v) => v === 'true');

export const listSkillsQuery = z
  .object({
    repo: z
      .string()
      .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/, 'must have the form owner/repo')
      .optional()
      .or(z.literal('').transform(() => undefined)),
    refresh: bool,
    sort_by: z.enum(['name', 'last_run']).optional(),
    include_malformed_skills: bool,
  })
  .passthrough();

/** GET /agent (skills, contract §1.1) and GET /agent/models (§1.4). */
export function catalogRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent', async (req, res) => {
    const query = parseQuery(listSkillsQuery, req.query);
    const result = await api.call(
      'catalog',
      'ListSkills',
      {
        caller: callerOf(req),
        repo: query.repo ?? '',
        refresh: query.refresh,
        sort_by: query.sort_by ?? 'name',
        include_malformed_skills: query.include_malformed_skills,
      },
      req.id,
    );
    res.json(JSON.parse(result.agents_json || '{"agents":[]}'));
  });

  router.get('/agent/models', async (req, res) => {
    const result = await api.call('catalog', 'ListModels', { caller: callerOf(req) }, req.id);
    res.json({ models: result.models.map(toModelJson), default_model_id: result.default_model_id });
  });

  return router;
}
