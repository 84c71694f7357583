import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toGitHubAppJson } from '../mappers/integration-resources';
import { parseBody } from '../validation';
import { createGitHubAppBody } from '../schemas/integration-schemas';

/** Integrations (docs/integrations.md): admins register and remove, members read; credentials are never returned. */
export function integrationRoutes(api: OrchestratorApi): Router {
  const router = Router();
  const ref = (req: { params: { githubAppId: string } } & Parameters<typeof callerOf>[0]) => ({
    caller: callerOf(req),
    github_app_id: req.params.githubAppId,
  });

  router.post('/integrations/github-apps', async (req, res) => {
    const body = parseBody(createGitHubAppBody, req.body);
    const created = await api.call(
      'integrations',
      'CreateGitHubApp',
      {
        caller: callerOf(req),
        ...body,
        environment_id: body.environment_id ?? '',
        trigger_label: body.trigger_label ?? '',
        repositories: body.repositories ?? [],
        allowed_users: body.allowed_users ?? [],
      },
      req.id,
    );
    res.status(201).json(toGitHubAppJson(created));
  });

  router.get('/integrations/github-apps', async (req, res) => {
    const { github_apps } = await api.call(
      'integrations',
      'ListGitHubApps',
      { caller: callerOf(req) },
      req.id,
    );
    res.json({ github_apps: github_apps.map(toGitHubAppJson) });
  });

  router.get('/integrations/github-apps/:githubAppId', async (req, res) => {
    res.json(toGitHubAppJson(await api.call('integrations', 'GetGitHubApp', ref(req), req.id)));
  });

  router.delete('/integrations/github-apps/:githubAppId', async (req, res) => {
    await api.call('integrations', 'DeleteGitHubApp', ref(req), req.id);
    res.status(204).end();
  });

  return router;
}
