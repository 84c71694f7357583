import * as w from '../schemas/webhook-schemas';
import { callerOf } from '../middleware/authenticate';
import {
  toAppliedAutomationJson,
  toAppliedIntegrationJson,
  toAppliedWebhookJson,
  toFactoryJson,
} from '../mappers/webhook-resources';
import { applyBody, createFactoryBody } from '../schemas/webhook-request-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

/** Factories and definitions as code (docs/webhooks.md). */
export const webhookFactoryEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/factories',
    tag: 'Factories',
    summary: 'Create a factory',
    success: json(w.factorySchema, 'Created.', 201),
    body: createFactoryBody,
    handle: async ({ req, res, body, api }) => {
      res
        .status(201)
        .json(
          toFactoryJson(
            await api.call('factories', 'CreateFactory', { caller: callerOf(req), name: body.name }, req.id),
          ),
        );
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories',
    tag: 'Factories',
    summary: 'List factories',
    success: json(w.factoryListResponseSchema, 'Factories.'),
    handle: async ({ req, res, api }) => {
      const { factories } = await api.call('factories', 'ListFactories', { caller: callerOf(req) }, req.id);
      res.json({ factories: factories.map(toFactoryJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId',
    tag: 'Factories',
    summary: 'Retrieve a factory',
    success: json(w.factorySchema, 'The factory.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toFactoryJson(
          await api.call(
            'factories',
            'GetFactory',
            { caller: callerOf(req), factory_id: req.params.factoryId },
            req.id,
          ),
        ),
      );
    },
  }),

  endpoint({
    method: 'delete',
    path: '/factories/:factoryId',
    tag: 'Factories',
    summary: 'Delete a factory',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call(
        'factories',
        'DeleteFactory',
        { caller: callerOf(req), factory_id: req.params.factoryId },
        req.id,
      );
      res.status(204).end();
    },
  }),

  endpoint({
    method: 'post',
    path: '/factories/:factoryId/apply',
    tag: 'Factories',
    summary: 'Apply definition files',
    success: json(w.applyResponseSchema, 'What was created, updated or left.'),
    body: applyBody,
    handle: async ({ req, res, body, api }) => {
      const files = [
        ...(body.files ?? []),
        ...(body.webhooks ?? []).map((w) => ({ path: `webhooks/${w.name}.yaml`, content: w.yaml })),
        ...(body.automations ?? []).map((a) => ({ path: `automations/${a.name}.yaml`, content: a.yaml })),
      ];
      const result = await api.call(
        'factories',
        'ApplyDefinitions',
        { caller: callerOf(req), factory_id: req.params.factoryId, files },
        req.id,
      );
      res.json({
        webhooks: result.webhooks.map(toAppliedWebhookJson),
        automations: result.automations.map(toAppliedAutomationJson),
        integrations: result.integrations.map(toAppliedIntegrationJson),
      });
    },
  }),
];
