import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toModelJson } from '../mappers/catalog-resources';
import { parseQuery } from '../validation';
import { listSkillsQuery } from '../schemas/resource-request-schemas';

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
