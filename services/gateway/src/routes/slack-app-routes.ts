import * as slackApps from '../schemas/slack-app-schemas';
import { callerOf } from '../middleware/authenticate';
import { toSlackAppJson } from '../mappers/slack-app-resources';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

const ref = (req: { params: { slackAppId: string } } & Parameters<typeof callerOf>[0]) => ({
  caller: callerOf(req),
  slack_app_id: req.params.slackAppId,
});

/** Slack apps (docs/integrations.md "Slack app"): admins only; the signing secret and bot token are never returned. */
export const slackAppEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/integrations/slack-apps',
    tag: 'Integrations',
    summary: 'Register a Slack app (its bot token is checked with auth.test first)',
    success: json(
      slackApps.slackAppSchema,
      "Registered; set webhook_url as the app's Events and slash command Request URL.",
      201,
    ),
    body: slackApps.createSlackAppBody,
    handle: async ({ req, res, body, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/slack-apps',
    tag: 'Integrations',
    summary: "List the team's Slack apps",
    success: json(slackApps.slackAppListResponseSchema, 'Apps, without credentials, oldest first.'),
    handle: async ({ req, res, api }) => {
      const { slack_apps } = await api.call(
        'integrations',
        'ListSlackApps',
        { caller: callerOf(req) },
        req.id,
      );
      res.json({ slack_apps: slack_apps.map(toSlackAppJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/slack-apps/:slackAppId',
    tag: 'Integrations',
    summary: 'Retrieve a Slack app',
    success: json(slackApps.slackAppSchema, 'The app.'),
    handle: async ({ req, res, api }) => {
      res.json(toSlackAppJson(await api.call('integrations', 'GetSlackApp', ref(req), req.id)));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/integrations/slack-apps/:slackAppId',
    tag: 'Integrations',
    summary: 'Remove a Slack app and its webhook',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('integrations', 'DeleteSlackApp', ref(req), req.id);
      res.status(204).end();
    },
  }),
];
