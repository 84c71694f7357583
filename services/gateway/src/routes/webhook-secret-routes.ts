import * as w from '../schemas/webhook-schemas';
import { callerOf } from '../middleware/authenticate';
import { toSecretJson } from '../mappers/webhook-resources';
import { createSecretBody, setSecretBody } from '../schemas/webhook-request-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

/** Team-managed secrets: create, set value, list and read metadata; a value is never returned. */
export const webhookSecretEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/secrets',
    tag: 'Secrets',
    summary: 'Create a managed secret',
    success: json(w.secretSchema, 'Created (the value is never returned).', 201),
    body: createSecretBody,
    handle: async ({ req, res, body, api }) => {
      res
        .status(201)
        .json(
          toSecretJson(
            await api.call(
              'factories',
              'CreateSecret',
              { caller: callerOf(req), name: body.name, value: body.value },
              req.id,
            ),
          ),
        );
    },
  }),

  endpoint({
    method: 'get',
    path: '/secrets',
    tag: 'Secrets',
    summary: 'List managed secrets',
    success: json(w.secretListResponseSchema, 'Secrets, without values.'),
    handle: async ({ req, res, api }) => {
      const { secrets } = await api.call('factories', 'ListSecrets', { caller: callerOf(req) }, req.id);
      res.json({ secrets: secrets.map(toSecretJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/secrets/:name',
    tag: 'Secrets',
    summary: "A secret's metadata",
    success: json(w.secretSchema, 'The secret, without its value.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toSecretJson(
          await api.call('factories', 'GetSecret', { caller: callerOf(req), name: req.params.name }, req.id),
        ),
      );
    },
  }),

  endpoint({
    method: 'put',
    path: '/secrets/:name',
    tag: 'Secrets',
    summary: "Set a secret's value",
    success: json(w.secretSchema, 'Updated.'),
    body: setSecretBody,
    handle: async ({ req, res, body, api }) => {
      res.json(
        toSecretJson(
          await api.call(
            'factories',
            'SetSecretValue',
            { caller: callerOf(req), name: req.params.name, value: body.value },
            req.id,
          ),
        ),
      );
    },
  }),

  endpoint({
    method: 'delete',
    path: '/secrets/:name',
    tag: 'Secrets',
    summary: 'Delete a managed secret',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('factories', 'DeleteSecret', { caller: callerOf(req), name: req.params.name }, req.id);
      res.status(204).end();
    },
  }),
];
