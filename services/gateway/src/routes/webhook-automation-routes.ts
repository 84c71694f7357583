import * as w from '../schemas/webhook-schemas';
import type { Request } from 'express';
import { callerOf } from '../middleware/authenticate';
import { toAutomationJson } from '../mappers/webhook-resources';
import { createAutomationBody, updateAutomationBody } from '../schemas/webhook-request-schemas';
import { endpoint, json, noContent, type Endpoint } from './endpoint';

const ref = (req: Request<{ factoryId: string; automationId: string }>) => ({
  caller: callerOf(req),
  factory_id: req.params.factoryId,
  automation_id: req.params.automationId,
});

/** Automations of a factory: prompt, agent config, enabled flag and a Webhook trigger (docs/webhooks.md). */
export const webhookAutomationEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/factories/:factoryId/automations',
    tag: 'Automations',
    summary: 'Create an automation',
    success: json(w.automationSchema, 'Created.', 201),
    body: createAutomationBody,
    handle: async ({ req, res, body, api }) => {
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
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId/automations',
    tag: 'Automations',
    summary: 'List automations',
    success: json(w.automationListResponseSchema, 'Automations.'),
    handle: async ({ req, res, api }) => {
      const { automations } = await api.call(
        'factories',
        'ListAutomations',
        { caller: callerOf(req), factory_id: req.params.factoryId },
        req.id,
      );
      res.json({ automations: automations.map(toAutomationJson) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/factories/:factoryId/automations/:automationId',
    tag: 'Automations',
    summary: 'Retrieve an automation',
    success: json(w.automationSchema, 'The automation.'),
    handle: async ({ req, res, api }) => {
      res.json(toAutomationJson(await api.call('factories', 'GetAutomation', ref(req), req.id)));
    },
  }),

  endpoint({
    method: 'patch',
    path: '/factories/:factoryId/automations/:automationId',
    tag: 'Automations',
    summary: 'Update an automation',
    success: json(w.automationSchema, 'Updated.'),
    body: updateAutomationBody,
    handle: async ({ req, res, body, api }) => {
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
    },
  }),

  ...(
    [
      ['enable', true, 'Enabled.'],
      ['disable', false, 'Disabled.'],
    ] as const
  ).map(([action, enabled, description]) =>
    endpoint({
      method: 'post',
      path: `/factories/:factoryId/automations/:automationId/${action}` as const,
      tag: 'Automations',
      summary: `${action === 'enable' ? 'Enable' : 'Disable'} an automation`,
      success: json(w.automationSchema, description),
      handle: async ({ req, res, api }) => {
        res.json(
          toAutomationJson(await api.call('factories', 'UpdateAutomation', { ...ref(req), enabled }, req.id)),
        );
      },
    }),
  ),

  endpoint({
    method: 'delete',
    path: '/factories/:factoryId/automations/:automationId',
    tag: 'Automations',
    summary: 'Delete an automation',
    success: noContent,
    handle: async ({ req, res, api }) => {
      await api.call('factories', 'DeleteAutomation', ref(req), req.id);
      res.status(204).end();
    },
  }),
];
