import { Router, type Request } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import {
  toDeliveryJson,
  toTestFilterJson,
  toWebhookJson,
  toWebhookWithSecretJson,
} from '../mappers/webhook-resources';
import { parseBody, parseQuery } from '../validation';
import {
  createWebhookBody,
  deliveriesQuery,
  enabledBody,
  rotateBody,
  testFilterBody,
} from '../schemas/webhook-request-schemas';

const ref = (req: Request<{ factoryId: string; webhookUid: string }>) => ({
  caller: callerOf(req),
  factory_id: req.params.factoryId,
  webhook_uid: req.params.webhookUid,
});

const BASE = '/factories/:factoryId/webhooks';
const ONE = `${BASE}/:webhookUid`;

/** Webhooks of a factory: configuration, secret rotation, delivery log and "Test filter" (docs/webhooks.md). */
export function webhookRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.post(BASE, async (req, res) => {
    const body = parseBody(createWebhookBody, req.body);
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
  });

  router.get(BASE, async (req, res) => {
    const { webhooks } = await api.call(
      'factories',
      'ListWebhooks',
      { caller: callerOf(req), factory_id: req.params.factoryId },
      req.id,
    );
    res.json({ webhooks: webhooks.map(toWebhookJson) });
  });

  router.get(ONE, async (req, res) => {
    res.json(toWebhookJson(await api.call('factories', 'GetWebhook', ref(req), req.id)));
  });

  router.patch(ONE, async (req, res) => {
    const body = parseBody(enabledBody, req.body);
    res.json(
      toWebhookJson(
        await api.call('factories', 'SetWebhookEnabled', { ...ref(req), enabled: body.enabled }, req.id),
      ),
    );
  });

  router.post(`${ONE}/enable`, async (req, res) => {
    res.json(
      toWebhookJson(await api.call('factories', 'SetWebhookEnabled', { ...ref(req), enabled: true }, req.id)),
    );
  });

  router.post(`${ONE}/disable`, async (req, res) => {
    res.json(
      toWebhookJson(
        await api.call('factories', 'SetWebhookEnabled', { ...ref(req), enabled: false }, req.id),
      ),
    );
  });

  router.delete(ONE, async (req, res) => {
    await api.call('factories', 'DeleteWebhook', ref(req), req.id);
    res.status(204).end();
  });

  router.post(`${ONE}/rotate-secret`, async (req, res) => {
    const body = parseBody(rotateBody, req.body);
    const rotated = await api.call(
      'factories',
      'RotateWebhookSecret',
      { ...ref(req), provider_secret: body.provider_secret ?? '' },
      req.id,
    );
    res.json(toWebhookWithSecretJson(rotated));
  });

  router.get(`${ONE}/deliveries`, async (req, res) => {
    const query = parseQuery(deliveriesQuery, req.query);
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
  });

  router.get(`${ONE}/deliveries/:deliveryId`, async (req, res) => {
    const delivery = await api.call(
      'factories',
      'GetDelivery',
      { ...ref(req), delivery_id: req.params.deliveryId },
      req.id,
    );
    res.json(toDeliveryJson(delivery, true));
  });

  router.post(`${ONE}/test-filter`, async (req, res) => {
    const body = parseBody(testFilterBody, req.body);
    const result = await api.call(
      'factories',
      'TestFilter',
      {
        ...ref(req),
        delivery_id: body.delivery_id,
        automation_id: body.automation_id ?? '',
        filter_json: body.filter ? JSON.stringify(body.filter) : '',
      },
      req.id,
    );
    res.json(toTestFilterJson(result));
  });

  return router;
}
