import { Router } from 'express';
import { z } from 'zod';
import { AppError } from '@conveyor/errors';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toRunItem } from '../mappers/run-item';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().min(1).optional(),
  sort_by: z.enum(['updated_at', 'created_at', 'title', 'agent']).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
});

export function parseQuery<T extends z.ZodTypeAny>(schema: T, query: unknown): z.infer<T> {
  const result = schema.safeParse(query);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new AppError('invalid_request', `${issue?.path.join('.') || 'query'}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

export function runsRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.get('/agent/runs', async (req, res) => {
    const query = parseQuery(listQuery, req.query);
    const result = await api.call(
      'runs',
      'ListRuns',
      {
        caller: callerOf(req),
        limit: query.limit ?? 0,
        cursor: query.cursor ?? '',
        sort_by: query.sort_by ?? '',
        sort_order: query.sort_order ?? '',
      },
      req.id,
    );
    res.json({
      runs: result.runs.map(toRunItem),
      page_info: { has_next_page: result.has_next_page, ...(result.next_cursor ? { next_cursor: result.next_cursor } : {}) },
    });
  });

  return router;
}
