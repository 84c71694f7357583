import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { FactoryServiceHandlers } from '@conveyor/proto';
import {
  createAutomation,
  deleteAutomation,
  getAutomation,
  listAutomations,
  updateAutomation,
} from '../../automations/automations';
import { applyDefinitions } from '../../definitions/apply-definitions';
import type { IntegrationProviders } from '../../definitions/apply-integrations';
import { createFactory, deleteFactory, getFactory, listFactories } from '../../factories/factories';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import type { SecretCipher } from '../../secrets/secret-cipher';
import {
  createSecret,
  deleteSecret,
  getSecret,
  listSecrets,
  setSecretValue,
} from '../../secrets/team-secrets';
import { getDelivery, listDeliveries, testFilter } from '../../webhooks/delivery-log';
import type { WebhookVersions } from '../../webhooks/webhook-versions';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  setWebhookEnabled,
} from '../../webhooks/manage-webhooks';
import {
  toAutomationProto,
  toDeliveryProto,
  toFactoryProto,
  toSecretProto,
  toWebhookProto,
  toWebhookWithSecret,
} from './factory-to-proto';

export interface FactoryHandlerDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  versions: WebhookVersions;
  webhookBaseUrl: string;
  /** Integrations' credentials are checked with their providers when applied. */
  providers: IntegrationProviders;
  logger: Logger;
}

/** A JSON-encoded request field (filter, agent config); malformed JSON is the caller's error. */
function parseJsonField(value: string, field: string): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new AppError('invalid_request', `${field} is not valid JSON`);
  }
}

/** FactoryService: each RPC is one domain function; the domain knows nothing about gRPC. */
export function factoryHandlers(deps: FactoryHandlerDeps): FactoryServiceHandlers {
  const { db, logger } = deps;
  return {
    CreateFactory: unary(logger, 'CreateFactory', async (req) =>
      toFactoryProto(await createFactory(db, requireCaller(req.caller), { name: req.name })),
    ),
    ListFactories: unary(logger, 'ListFactories', async (req) => ({
      factories: (await listFactories(db, requireCaller(req.caller))).map(toFactoryProto),
    })),
    GetFactory: unary(logger, 'GetFactory', async (req) =>
      toFactoryProto(await getFactory(db, requireCaller(req.caller), req.factory_id)),
    ),
    DeleteFactory: unary(logger, 'DeleteFactory', async (req) => {
      await deleteFactory(db, requireCaller(req.caller), req.factory_id);
      return {};
    }),
    ApplyDefinitions: unary(logger, 'ApplyDefinitions', async (req) => {
      const result = await applyDefinitions(deps, requireCaller(req.caller), req.factory_id, req.files);
      const toProto = (d: { name: string; id: string; action: string; url?: string }) => ({
        name: d.name,
        id: d.id,
        action: d.action,
        url: d.url ?? '',
        kind: '',
        changed: [],
      });
      return {
        webhooks: result.webhooks.map(toProto),
        automations: result.automations.map(toProto),
        integrations: result.integrations.map((i) => ({
          ...toProto(i),
          kind: i.kind,
          changed: i.changed ?? [],
        })),
      };
    }),

    CreateWebhook: unary(logger, 'CreateWebhook', async (req) =>
      toWebhookWithSecret(
        await createWebhook(deps, requireCaller(req.caller), req.factory_id, {
          name: req.name,
          authMode: req.auth_mode,
          signatureScheme: req.signature_scheme,
          providerSecret: req.provider_secret,
          secretName: req.secret_name,
          deliveryIdHeader: req.delivery_id_header,
        }),
      ),
    ),
    ListWebhooks: unary(logger, 'ListWebhooks', async (req) => ({
      webhooks: (await listWebhooks(deps, requireCaller(req.caller), req.factory_id)).map(toWebhookProto),
    })),
    GetWebhook: unary(logger, 'GetWebhook', async (req) =>
      toWebhookProto(await getWebhook(deps, requireCaller(req.caller), req.factory_id, req.webhook_uid)),
    ),
    SetWebhookEnabled: unary(logger, 'SetWebhookEnabled', async (req) =>
      toWebhookProto(
        await setWebhookEnabled(
          deps,
          requireCaller(req.caller),
          req.factory_id,
          req.webhook_uid,
          req.enabled,
        ),
      ),
    ),
    DeleteWebhook: unary(logger, 'DeleteWebhook', async (req) => {
      await deleteWebhook(deps, requireCaller(req.caller), req.factory_id, req.webhook_uid);
      return {};
    }),
    RotateWebhookSecret: unary(logger, 'RotateWebhookSecret', async (req) =>
      toWebhookWithSecret(
        await rotateWebhookSecret(
          deps,
          requireCaller(req.caller),
          req.factory_id,
          req.webhook_uid,
          req.provider_secret,
        ),
      ),
    ),
    ListDeliveries: unary(logger, 'ListDeliveries', async (req) => {
      const page = await listDeliveries(db, requireCaller(req.caller), req.factory_id, req.webhook_uid, {
        limit: req.limit,
        cursor: req.cursor,
      });
      return {
        deliveries: page.deliveries.map((d) => toDeliveryProto(d)),
        next_cursor: page.nextCursor ?? '',
      };
    }),
    GetDelivery: unary(logger, 'GetDelivery', async (req) =>
      toDeliveryProto(
        await getDelivery(db, requireCaller(req.caller), req.factory_id, req.webhook_uid, req.delivery_id),
        true,
      ),
    ),
    TestFilter: unary(logger, 'TestFilter', async (req) => {
      const result = await testFilter(db, requireCaller(req.caller), req.factory_id, req.webhook_uid, {
        ...(req.delivery_id && { deliveryId: req.delivery_id }),
        ...(req.sample_payload_json && {
          samplePayload: parseJsonField(req.sample_payload_json, 'sample_payload'),
        }),
        ...(req.automation_id && { automationId: req.automation_id }),
        ...(req.filter_json && { filter: parseJsonField(req.filter_json, 'filter') }),
      });
      return {
        would_trigger: result.wouldTrigger,
        webhook_check_passed: result.webhookCheck.passed,
        webhook_check_detail: result.webhookCheck.detail,
        payload_check_passed: result.payloadCheck.passed,
        payload_mismatches: result.payloadCheck.mismatches,
        // The filter is validated before it is applied (webhooks/delivery-log.ts), so applying it reports no error.
        payload_check_error: '',
        payload_check_detail: result.payloadCheck.detail,
      };
    }),

    CreateAutomation: unary(logger, 'CreateAutomation', async (req) =>
      toAutomationProto(
        await createAutomation(db, requireCaller(req.caller), req.factory_id, {
          name: req.name,
          prompt: req.prompt,
          agentConfig: parseJsonField(req.agent_config_json, 'agent_config'),
          ...(req.enabled !== undefined && { enabled: req.enabled }),
          trigger: parseJsonField(req.trigger_json, 'trigger'),
        }),
      ),
    ),
    ListAutomations: unary(logger, 'ListAutomations', async (req) => ({
      automations: (await listAutomations(db, requireCaller(req.caller), req.factory_id)).map(
        toAutomationProto,
      ),
    })),
    GetAutomation: unary(logger, 'GetAutomation', async (req) =>
      toAutomationProto(
        await getAutomation(db, requireCaller(req.caller), req.factory_id, req.automation_id),
      ),
    ),
    UpdateAutomation: unary(logger, 'UpdateAutomation', async (req) =>
      toAutomationProto(
        await updateAutomation(db, requireCaller(req.caller), req.factory_id, req.automation_id, {
          ...(req.name !== undefined && { name: req.name }),
          ...(req.prompt !== undefined && { prompt: req.prompt }),
          ...(req.agent_config_json !== undefined && {
            agentConfig: parseJsonField(req.agent_config_json, 'agent_config') ?? null,
          }),
          ...(req.enabled !== undefined && { enabled: req.enabled }),
          ...(req.trigger_json !== undefined && {
            trigger: parseJsonField(req.trigger_json, 'trigger') ?? null,
          }),
        }),
      ),
    ),
    DeleteAutomation: unary(logger, 'DeleteAutomation', async (req) => {
      await deleteAutomation(db, requireCaller(req.caller), req.factory_id, req.automation_id);
      return {};
    }),

    CreateSecret: unary(logger, 'CreateSecret', async (req) =>
      toSecretProto(
        await createSecret(deps, requireCaller(req.caller), { name: req.name, value: req.value }),
      ),
    ),
    SetSecretValue: unary(logger, 'SetSecretValue', async (req) =>
      toSecretProto(
        await setSecretValue(deps, requireCaller(req.caller), { name: req.name, value: req.value }),
      ),
    ),
    ListSecrets: unary(logger, 'ListSecrets', async (req) => ({
      secrets: (await listSecrets(db, requireCaller(req.caller))).map(toSecretProto),
    })),
    GetSecret: unary(logger, 'GetSecret', async (req) =>
      toSecretProto(await getSecret(db, requireCaller(req.caller), req.name)),
    ),
    DeleteSecret: unary(logger, 'DeleteSecret', async (req) => {
      await deleteSecret(db, requireCaller(req.caller), req.name);
      return {};
    }),
  };
}
