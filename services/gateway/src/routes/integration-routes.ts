import * as integ from '../schemas/integration-schemas';
import { callerOf } from '../middleware/authenticate';
import { toGitHubAppJson } from '../mappers/integration-resources';
import {
  createGitHubAppBody,
  githubAppManifestCallbackQuery,
  startGitHubAppManifestBody,
} from '../schemas/integration-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

const ref = (req: { params: { githubAppId: string } } & Parameters<typeof callerOf>[0]) => ({
  caller: callerOf(req),
  github_app_id: req.params.githubAppId,
});

/** A GitHub App's optional settings as the RPCs take them (proto3: empty for absent). */
const githubAppSettings = (body: {
  environment_id?: string;
  trigger_label?: string;
  repositories?: string[];
  allowed_users?: string[];
}) => ({
  environment_id: body.environment_id ?? '',
  trigger_label: body.trigger_label ?? '',
  repositories: body.repositories ?? [],
  allowed_users: body.allowed_users ?? [],
});

/** Integrations (docs/integrations.md): admins register and remove, members read; credentials are never returned. */
export const integrationEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/integrations/github-apps',
    tag: 'Integrations',
    summary: 'Register a GitHub App (its key is checked against GitHub first)',
    success: json(integ.githubAppSchema, "Registered; set webhook_url as the App's webhook URL.", 201),
    body: createGitHubAppBody,
    handle: async ({ req, res, body, api }) => {
      const created = await api.call(
        'integrations',
        'CreateGitHubApp',
        {
          caller: callerOf(req),
          ...body,
          ...githubAppSettings(body),
        },
        req.id,
      );
      res.status(201).json(toGitHubAppJson(created));
    },
  }),

  endpoint({
    method: 'post',
    path: '/integrations/github-apps/manifest',
    tag: 'Integrations',
    summary: "Start creating a GitHub App on GitHub from its manifest (GitHub's manifest flow)",
    success: json(
      integ.githubAppManifestSchema,
      'POST a form with the field `manifest` to post_url from the browser; GitHub comes back to the callback.',
      201,
    ),
    body: startGitHubAppManifestBody,
    handle: async ({ req, res, body, api, publicUrl, githubWebUrl }) => {
      const started = await api.call(
        'integrations',
        'StartGitHubAppManifest',
        {
          caller: callerOf(req),
          ...body,
          ...githubAppSettings(body),
          organization: body.organization ?? '',
          redirect_url: `${publicUrl()}/v1/integrations/github-apps/manifest/callback`,
          homepage_url: `${publicUrl()}/console/integrations`,
          github_web_url: githubWebUrl,
        },
        req.id,
      );
      res.set('Cache-Control', 'no-store');
      res.status(201).json({ ...started, manifest: JSON.parse(started.manifest) as unknown });
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/github-apps/manifest/callback',
    tag: 'Integrations',
    summary: 'Where GitHub sends the browser back: registers the App it created (the state is the authority)',
    auth: 'optional',
    query: githubAppManifestCallbackQuery,
    success: {
      status: 302,
      description: "Registered; to the console's integrations page, `?github_app=<github_app_id>`.",
      json: {
        status: 201,
        schema: integ.githubAppSchema,
        description: 'Registered (to a client that accepts JSON and not HTML).',
      },
    },
    handle: async ({ req, res, query, api, publicUrl }) => {
      const created = await api.call(
        'integrations',
        'CompleteGitHubAppManifest',
        { ...(req.caller ? { caller: req.caller } : {}), state: query.state, code: query.code },
        req.id,
      );
      res.set('Cache-Control', 'no-store');
      if (req.accepts(['html', 'json']) === 'json') {
        res.status(201).json(toGitHubAppJson(created));
        return;
      }
      res.redirect(302, `${publicUrl()}/console/integrations?github_app=${encodeURIComponent(created.id)}`);
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/github-apps',
    tag: 'Integrations',
    summary: "List the team's GitHub Apps",
    success: json(integ.githubAppListResponseSchema, 'Apps, without credentials, oldest first.'),
    handle: async ({ req, res, api }) => {
      const { github_apps } = await api.call(
        'integrations',
        'ListGitHubApps',
        { caller: callerOf(req) },
        req.id,
      );
      res.json({ github_apps: github_apps.map(toGitHubAppJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/integrations/github-apps/:githubAppId',
    tag: 'Integrations',
    summary: 'Retrieve a GitHub App',
    success: json(integ.githubAppSchema, 'The App.'),
    handle: async ({ req, res, api }) => {
      res.json(toGitHubAppJson(await api.call('integrations', 'GetGitHubApp', ref(req), req.id)));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/integrations/github-apps/:githubAppId',
    tag: 'Integrations',
    summary: 'Remove a GitHub App and its webhook',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('integrations', 'DeleteGitHubApp', ref(req), req.id);
      res.status(204).end();
    },
  }),
];
