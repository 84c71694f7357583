import { callerOf } from '../middleware/authenticate';
import { toLinearIntegrationJson } from '../mappers/linear-integration-resources';
import * as linear from '../schemas/linear-integration-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

const ref = (req: { params: { integrationId: string } } & Parameters<typeof callerOf>[0]) => ({
  caller: callerOf(req),
  linear_integration_id: req.params.integrationId,
});

/** Linear integrations (docs/integrations.md "Linear"): admins register and remove, members read; keys never shown. */
export const linearIntegrationEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/integrations/linear',
    tag: 'Integrations',
    summary: "Register a Linear integration (its key is checked with Linear's viewer query first)",
    success: json(
      linear.linearIntegrationSchema,
      "Registered; set webhook_url as the webhook's URL in Linear.",
      201,
    ),
    body: linear.createLinearIntegrationBody,
    handle: async ({ req, res, body, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/linear',
    tag: 'Integrations',
    summary: "List the team's Linear integrations",
    success: json(
      linear.linearIntegrationListResponseSchema,
      'Integrations, without credentials, oldest first.',
    ),
    handle: async ({ req, res, api }) => {
      const { linear_integrations } = await api.call(
        'integrations',
        'ListLinearIntegrations',
        { caller: callerOf(req) },
        req.id,
      );
      res.json({ linear_integrations: linear_integrations.map(toLinearIntegrationJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/linear/:integrationId',
    tag: 'Integrations',
    summary: 'Retrieve a Linear integration',
    success: json(linear.linearIntegrationSchema, 'The integration.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toLinearIntegrationJson(await api.call('integrations', 'GetLinearIntegration', ref(req), req.id)),
      );
    },
  }),

  endpoint({
    method: 'delete',
    path: '/integrations/linear/:integrationId',
    tag: 'Integrations',
    summary: 'Remove a Linear integration and its webhook',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('integrations', 'DeleteLinearIntegration', ref(req), req.id);
      res.status(204).end();
    },
  }),
];
