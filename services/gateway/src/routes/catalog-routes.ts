import * as r from '../schemas/resource-schemas';
import { callerOf } from '../middleware/authenticate';
import { toModelJson } from '../mappers/catalog-resources';
import { listSkillsQuery } from '../schemas/resource-request-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

export const catalogEndpoints: Endpoint[] = [
  endpoint({
    method: 'get',
    path: '/agent',
    tag: 'Catalog',
    summary: 'List agents (skills)',
    success: json(r.agentListResponseSchema, 'Skills grouped by name.'),
    query: listSkillsQuery,
    handle: async ({ req, res, query, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/models',
    tag: 'Catalog',
    summary: 'List models',
    success: json(r.modelListResponseSchema, 'Models and the default.'),
    handle: async ({ req, res, api }) => {
      const result = await api.call('catalog', 'ListModels', { caller: callerOf(req) }, req.id);
      res.json({ models: result.models.map(toModelJson), default_model_id: result.default_model_id });
    },
  }),
];
