import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toLinearIntegrationJson } from '../mappers/linear-integration-resources';
import { parseBody } from '../validation';
import { createLinearIntegrationBody } from '../schemas/linear-integration-schemas';

/** Linear integrations (docs/integrations.md "Linear"): admins register and remove, members read; keys never shown. */
export function linearIntegrationRoutes(api: OrchestratorApi): Router {
  const router = Router();
  const ref = (req: { params: { integrationId: string } } & Parameters<typeof callerOf>[0]) => ({
    caller: callerOf(req),
    linear_integration_id: req.params.integrationId,
  });

  router.post('/integrations/linear', async (req, res) => {
    const body = parseBody(createLinearIntegrationBody, req.body);
    const created = await api.call(
      'integrations',
      'CreateLinearIntegration',
      {
        caller: callerOf(req),
        ...body,
        agent_user_id: body.agent_user_id ?? '',
        environment_id: body.environment_id ?? '',
        trigger_label: body.trigger_label ?? '',
        team_repositories: body.team_repositories ?? {},
        pr_opened_state_id: body.pr_opened_state_id ?? '',
        run_ended_state_id: body.run_ended_state_id ?? '',
      },
      req.id,
    );
    res.status(201).json(toLinearIntegrationJson(created));
  });

  router.get('/integrations/linear', async (req, res) => {
    const { linear_integrations } = await api.call(
      'integrations',
      'ListLinearIntegrations',
      { caller: callerOf(req) },
      req.id,
    );
    res.json({ linear_integrations: linear_integrations.map(toLinearIntegrationJson) });
  });

  router.get('/integrations/linear/:integrationId', async (req, res) => {
    res.json(
      toLinearIntegrationJson(await api.call('integrations', 'GetLinearIntegration', ref(req), req.id)),
    );
  });

  router.delete('/integrations/linear/:integrationId', async (req, res) => {
    await api.call('integrations', 'DeleteLinearIntegration', ref(req), req.id);
    res.status(204).end();
  });

  return router;
}
