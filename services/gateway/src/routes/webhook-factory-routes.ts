import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toAppliedAutomationJson, toAppliedWebhookJson, toFactoryJson } from '../mappers/webhook-resources';
import { parseBody } from '../validation';
import { applyBody, createFactoryBody } from '../schemas/webhook-request-schemas';

/** Factories and definitions as code (docs/webhooks.md). */
export function webhookFactoryRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.post('/factories', async (req, res) => {
    const body = parseBody(createFactoryBody, req.body);
    res
      .status(201)
      .json(
        toFactoryJson(
          await api.call('factories', 'CreateFactory', { caller: callerOf(req), name: body.name }, req.id),
        ),
      );
  });

  router.get('/factories', async (req, res) => {
    const { factories } = await api.call('factories', 'ListFactories', { caller: callerOf(req) }, req.id);
    res.json({ factories: factories.map(toFactoryJson) });
  });

  router.get('/factories/:factoryId', async (req, res) => {
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
  });

  router.delete('/factories/:factoryId', async (req, res) => {
    await api.call(
      'factories',
      'DeleteFactory',
      { caller: callerOf(req), factory_id: req.params.factoryId },
      req.id,
    );
    res.status(204).end();
  });

  router.post('/factories/:factoryId/apply', async (req, res) => {
    const body = parseBody(applyBody, req.body);
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
    });
  });

  return router;
}
