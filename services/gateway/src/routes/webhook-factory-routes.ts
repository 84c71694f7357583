import { Router } from 'express';
import { z } from 'zod';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toAppliedAutomationJson, toAppliedWebhookJson, toFactoryJson } from '../mappers/webhook-resources';
import { parseBody } from '../validation';

export const createFactoryBody = z.object({ name: z.string().trim().min(1).max(100) }).strict();

const MAX_DEFINITION_BYTES = 256 * 1024;
const definitionContent = z
  .string()
  .max(MAX_DEFINITION_BYTES, `must be at most ${MAX_DEFINITION_BYTES} characters`);

/**
 * Body of POST /factories/{id}/apply: the definition files themselves, either as paths and contents
 * (`webhooks/<name>.yaml`, `automations/<name>.yaml`) or grouped by kind with the name and the YAML text.
 */
export const applyBody = z
  .object({
    files: z
      .array(z.object({ path: z.string().min(1).max(500), content: definitionContent }).strict())
      .max(200)
      .optional(),
    webhooks: z
      .array(z.object({ name: z.string().min(1).max(64), yaml: definitionContent }).strict())
      .max(200)
      .optional(),
    automations: z
      .array(z.object({ name: z.string().min(1).max(64), yaml: definitionContent }).strict())
      .max(200)
      .optional(),
  })
  .strict()
  .refine((b) => (b.files?.length ?? 0) + (b.webhooks?.length ?? 0) + (b.automations?.length ?? 0) > 0, {
    message: 'give at least one definition file',
    path: ['files'],
  });

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
