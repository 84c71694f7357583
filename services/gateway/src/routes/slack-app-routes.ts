import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toSlackAppJson } from '../mappers/slack-app-resources';
import { parseBody } from '../validation';
import { createSlackAppBody } from '../schemas/slack-app-schemas';

/** Slack apps (docs/integrations.md "Slack app"): admins only; the signing secret and bot token are never returned. */
export function slackAppRoutes(api: OrchestratorApi): Router {
  const router = Router();
  const ref = (req: { params: { slackAppId: string } } & Parameters<typeof callerOf>[0]) => ({
    caller: callerOf(req),
    slack_app_id: req.params.slackAppId,
  });

  router.post('/integrations/slack-apps', async (req, res) => {
    const body = parseBody(createSlackAppBody, req.body);
    const created = await api.call(
      'integrations',
      'CreateSlackApp',
      {
        caller: callerOf(req),
        ...body,
        environment_id: body.environment_id ?? '',
        allowed_channels: body.allowed_channels ?? [],
        allowed_users: body.allowed_users ?? [],
      },
      req.id,
    );
    res.status(201).json(toSlackAppJson(created));
  });

  router.get('/integrations/slack-apps', async (req, res) => {
    const { slack_apps } = await api.call('integrations', 'ListSlackApps', { caller: callerOf(req) }, req.id);
    res.json({ slack_apps: slack_apps.map(toSlackAppJson) });
  });

  router.get('/integrations/slack-apps/:slackAppId', async (req, res) => {
    res.json(toSlackAppJson(await api.call('integrations', 'GetSlackApp', ref(req), req.id)));
  });

  router.delete('/integrations/slack-apps/:slackAppId', async (req, res) => {
    await api.call('integrations', 'DeleteSlackApp', ref(req), req.id);
    res.status(204).end();
  });

  return router;
}
