import * as w from '../schemas/webhook-schemas';
import type { Request } from 'express';
import { callerOf } from '../middleware/authenticate';
import {
  toDeliveryJson,
  toTestFilterJson,
  toWebhookJson,
  toWebhookWithSecretJson,
} from '../mappers/webhook-resources';
import {
  createWebhookBody,
  deliveriesQuery,
  enabledBody,
  rotateBody,
  testFilterBody,
} from '../schemas/webhook-request-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

const ref = (req: Request<{ factoryId: string; webhookUid: string }>) => ({
  caller: callerOf(req),
  factory_id: req.params.factoryId,
  webhook_uid: req.params.webhookUid,
});

/** Webhooks of a factory: configuration, secret rotation, delivery log and "Test filter" (docs/webhooks.md). */
export const webhookEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/factories/:factoryId/webhooks',
    tag: 'Webhooks',
    summary: 'Create a webhook',
    success: json(w.webhookWithSecretSchema, 'Created; the secret is shown this once.', 201),
    body: createWebhookBody,
    handle: async ({ req, res, body, api }) => {
      const created = await api.call(
        'factories',
        'CreateWebhook',
        {
          caller: callerOf(req),
          factory_id: req.params.factoryId,
          name: body.name,
          auth_mode: body.auth_mode ?? '',
          signature_scheme: body.signature_scheme ?? '',
          provider_secret: body.provider_secret ?? '',
          secret_name: body.secret_name ?? '',
          delivery_id_header: body.delivery_id_header ?? '',
        },
        req.id,
      );
      res.status(201).json(toWebhookWithSecretJson(created));
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId/webhooks',
    tag: 'Webhooks',
    summary: 'List webhooks',
    success: json(w.webhookListResponseSchema, 'Webhooks.'),
    handle: async ({ req, res, api }) => {
      const { webhooks } = await api.call(
        'factories',
        'ListWebhooks',
        { caller: callerOf(req), factory_id: req.params.factoryId },
        req.id,
      );
      res.json({ webhooks: webhooks.map(toWebhookJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId/webhooks/:webhookUid',
    tag: 'Webhooks',
    summary: 'Retrieve a webhook',
    success: json(w.webhookSchema, 'The webhook.'),
    handle: async ({ req, res, api }) => {
      res.json(toWebhookJson(await api.call('factories', 'GetWebhook', ref(req), req.id)));
    },
  }),

  endpoint({
    method: 'patch',
    path: '/factories/:factoryId/webhooks/:webhookUid',
    tag: 'Webhooks',
    summary: 'Enable or disable a webhook',
    success: json(w.webhookSchema, 'Updated.'),
    body: enabledBody,
    handle: async ({ req, res, body, api }) => {
      res.json(
        toWebhookJson(
          await api.call('factories', 'SetWebhookEnabled', { ...ref(req), enabled: body.enabled }, req.id),
        ),
      );
    },
  }),

  endpoint({
    method: 'post',
    path: '/factories/:factoryId/webhooks/:webhookUid/enable',
    tag: 'Webhooks',
    summary: 'Enable a webhook',
    success: json(w.webhookSchema, 'Enabled.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toWebhookJson(
          await api.call('factories', 'SetWebhookEnabled', { ...ref(req), enabled: true }, req.id),
        ),
      );
    },
  }),

  endpoint({
    method: 'post',
    path: '/factories/:factoryId/webhooks/:webhookUid/disable',
    tag: 'Webhooks',
    summary: 'Disable a webhook',
    success: json(w.webhookSchema, 'Disabled.'),
    handle: async ({ req, res, api }) => {
      res.json(
        toWebhookJson(
          await api.call('factories', 'SetWebhookEnabled', { ...ref(req), enabled: false }, req.id),
        ),
      );
    },
  }),

  endpoint({
    method: 'delete',
    path: '/factories/:factoryId/webhooks/:webhookUid',
    tag: 'Webhooks',
    summary: 'Delete a webhook',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('factories', 'DeleteWebhook', ref(req), req.id);
      res.status(204).end();
    },
  }),

  endpoint({
    method: 'post',
    path: '/factories/:factoryId/webhooks/:webhookUid/rotate-secret',
    tag: 'Webhooks',
    summary: "Rotate a webhook's secret",
    success: json(w.webhookWithSecretSchema, 'Rotated; the new secret is shown this once.'),
    body: rotateBody,
    handle: async ({ req, res, body, api }) => {
      const rotated = await api.call(
        'factories',
        'RotateWebhookSecret',
        { ...ref(req), provider_secret: body.provider_secret ?? '' },
        req.id,
      );
      res.json(toWebhookWithSecretJson(rotated));
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId/webhooks/:webhookUid/deliveries',
    tag: 'Webhooks',
    summary: 'Delivery log',
    success: json(w.deliveryListResponseSchema, 'Newest first.'),
    query: deliveriesQuery,
    handle: async ({ req, res, query, api }) => {
      const page = await api.call(
        'factories',
        'ListDeliveries',
        { ...ref(req), limit: query.limit ?? 0, cursor: query.cursor ?? '' },
        req.id,
      );
      res.json({
        deliveries: page.deliveries.map((d) => toDeliveryJson(d)),
        ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
      });
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId/webhooks/:webhookUid/deliveries/:deliveryId',
    tag: 'Webhooks',
    summary: 'One delivery with its payload and outcome',
    success: json(w.deliveryDetailSchema, 'The delivery.'),
    handle: async ({ req, res, api }) => {
      const delivery = await api.call(
        'factories',
        'GetDelivery',
        { ...ref(req), delivery_id: req.params.deliveryId },
        req.id,
      );
      res.json(toDeliveryJson(delivery, true));
    },
  }),

  endpoint({
    method: 'post',
    path: '/factories/:factoryId/webhooks/:webhookUid/test-filter',
    tag: 'Webhooks',
    summary: 'Test a filter against a stored delivery or a sample body',
    success: json(w.testFilterResponseSchema, 'Would it trigger, and why.'),
    body: testFilterBody,
    handle: async ({ req, res, body, api }) => {
      const result = await api.call(
        'factories',
        'TestFilter',
        {
          ...ref(req),
          delivery_id: body.delivery_id ?? '',
          sample_payload_json: body.sample_payload === undefined ? '' : JSON.stringify(body.sample_payload),
          automation_id: body.automation_id ?? '',
          filter_json: body.filter ? JSON.stringify(body.filter) : '',
        },
        req.id,
      );
      res.json(toTestFilterJson(result));
    },
  }),
];
