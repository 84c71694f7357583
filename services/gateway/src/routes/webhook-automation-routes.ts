import { Router, type Request } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toAutomationJson } from '../mappers/webhook-resources';
import { parseBody } from '../validation';
import { createAutomationBody, updateAutomationBody } from '../schemas/webhook-request-schemas';

const ref = (req: Request<{ factoryId: string; automationId: string }>) => ({
  caller: callerOf(req),
  factory_id: req.params.factoryId,
  automation_id: req.params.automationId,
});

const BASE = '/factories/:factoryId/automations';
const ONE = `${BASE}/:automationId`;

/** Automations of a factory: prompt, agent config, enabled flag and a Webhook trigger (docs/webhooks.md). */
export function webhookAutomationRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.post(BASE, async (req, res) => {
    const body = parseBody(createAutomationBody, req.body);
    const created = await api.call(
      'factories',
      'CreateAutomation',
      {
        caller: callerOf(req),
        factory_id: req.params.factoryId,
        name: body.name,
        prompt: body.prompt,
        agent_config_json: body.agent_config ? JSON.stringify(body.agent_config) : '',
        ...(body.enabled !== undefined && { enabled: body.enabled }),
        trigger_json: JSON.stringify(body.trigger),
      },
      req.id,
    );
    res.status(201).json(toAutomationJson(created));
  });

  router.get(BASE, async (req, res) => {
    const { automations } = await api.call(
      'factories',
      'ListAutomations',
      { caller: callerOf(req), factory_id: req.params.factoryId },
      req.id,
    );
    res.json({ automations: automations.map(toAutomationJson) });
  });

  router.get(ONE, async (req, res) => {
    res.json(toAutomationJson(await api.call('factories', 'GetAutomation', ref(req), req.id)));
  });

  router.patch(ONE, async (req, res) => {
    const body = parseBody(updateAutomationBody, req.body);
    const updated = await api.call(
      'factories',
      'UpdateAutomation',
      {
        ...ref(req),
        ...(body.name !== undefined && { name: body.name }),
        ...(body.prompt !== undefined && { prompt: body.prompt }),
        ...(body.agent_config !== undefined && {
          agent_config_json: body.agent_config === null ? '{}' : JSON.stringify(body.agent_config),
        }),
        ...(body.enabled !== undefined && { enabled: body.enabled }),
        ...(body.trigger !== undefined && { trigger_json: JSON.stringify(body.trigger) }),
      },
      req.id,
    );
    res.json(toAutomationJson(updated));
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    router.post(`${ONE}/${action}`, async (req, res) => {
      res.json(
        toAutomationJson(await api.call('factories', 'UpdateAutomation', { ...ref(req), enabled }, req.id)),
      );
    });
  }

  router.delete(ONE, async (req, res) => {
    await api.call('factories', 'DeleteAutomation', ref(req), req.id);
    res.status(204).end();
  });

  return router;
}
