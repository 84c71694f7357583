import { z, type AnyZodObject, type ZodTypeAny } from 'zod';
import {
  createAgentBody,
  createEnvironmentBody,
  createKeyBody,
  createScheduleBody,
  invitationBody,
  listEnvironmentsQuery,
  listSkillsQuery,
  updateAgentBody,
  updateEnvironmentBody,
  updateScheduleBody,
} from '../schemas/resource-request-schemas';
import {
  createRunBody,
  externalReferenceQuery,
  followupBody,
  handoffAttachmentBody,
  reportArtifactBody,
  scoresBody,
} from '../schemas/run-request-schemas';
import {
  applyBody,
  createAutomationBody,
  createFactoryBody,
  createSecretBody,
  createWebhookBody,
  deliveriesQuery,
  enabledBody,
  rotateBody,
  setSecretBody,
  testFilterBody,
  updateAutomationBody,
} from '../schemas/webhook-request-schemas';
import { runListQueryObject } from '../schemas/run-list-query';
import * as r from '../schemas/resource-schemas';
import * as runs from '../schemas/run-schemas';
import * as w from '../schemas/webhook-schemas';
import * as ev from '../schemas/event-endpoint-schemas';
import { insightsQuery, insightsResponseSchema } from '../schemas/insights-schemas';
import * as integ from '../schemas/integration-schemas';
import * as slackApps from '../schemas/slack-app-schemas';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How a successful answer looks: a JSON body, no body (204), a redirect (302) or raw bytes. */
export type Success =
  | { status: 200 | 201 | 202; schema: ZodTypeAny; description: string }
  | { status: 204; description: string }
  | { status: 302; description: string }
  | { status: 200; contentType: string; description: string };

/**
 * One operation of the public API. `path` is express's form (`/v1/agent/runs/:runId`); the OpenAPI document and
 * the route check are both derived from this table, and the test-time response validator reads it too.
 */
export interface Operation {
  method: HttpMethod;
  path: string;
  summary: string;
  tag: string;
  /** `api_key` = Bearer key required; `optional` = public unless the resource is private; `none` = never. */
  auth: 'api_key' | 'optional' | 'none';
  query?: AnyZodObject;
  body?: ZodTypeAny;
  success: Success;
  /** Statuses this operation answers besides the common ones (problem+json). */
  errors?: number[];
  /** Its 503 body when that is not a problem (readiness reports its checks either way). */
  unavailable?: ZodTypeAny;
}

/** `/readyz` answers its checks with 200 and 503 alike. */
const readinessBody = z.object({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.unknown()) });

const json = (schema: ZodTypeAny, description: string, status: 200 | 201 | 202 = 200): Success => ({
  status,
  schema,
  description,
});
const noContent: Success = { status: 204, description: 'Done; no body.' };

const V1 = '/v1';
const run = `${V1}/agent/runs/:runId`;
const schedule = `${V1}/agent/schedules/:scheduleId`;
const identity = `${V1}/agent/identities/:uid`;
const environment = `${V1}/agent/environments/:uid`;
const factory = `${V1}/factories/:factoryId`;
const webhook = `${factory}/webhooks/:webhookUid`;
const automation = `${factory}/automations/:automationId`;
const eventEndpoint = `${V1}/event-endpoints/:endpointId`;
const githubApp = `${V1}/integrations/github-apps/:githubAppId`;
const slackApp = `${V1}/integrations/slack-apps/:slackAppId`;

const api = (
  method: HttpMethod,
  path: string,
  tag: string,
  summary: string,
  success: Success,
  rest: Partial<Operation> = {},
): Operation => ({
  method,
  path,
  tag,
  summary,
  success,
  auth: 'api_key',
  ...rest,
});

export const OPERATIONS: Operation[] = [
  // Operations outside /v1.
  api(
    'get',
    '/healthz',
    'Operations',
    'Liveness',
    json(z.object({ status: z.literal('ok') }), 'The process is alive.'),
    { auth: 'none' },
  ),
  api(
    'get',
    '/readyz',
    'Operations',
    'Readiness (503 while a dependency is down or the gateway drains)',
    json(readinessBody, 'Ready.'),
    { auth: 'none', unavailable: readinessBody },
  ),
  api(
    'get',
    '/metrics',
    'Operations',
    'Prometheus metrics',
    { status: 200, contentType: 'text/plain', description: 'Prometheus text format.' },
    { auth: 'none' },
  ),
  api(
    'get',
    `${V1}/openapi.json`,
    'Operations',
    'This document',
    json(z.record(z.unknown()), 'The OpenAPI 3.1 document of this API.'),
    { auth: 'none' },
  ),
  api(
    'get',
    `${V1}/blobs/:token`,
    'Operations',
    'Download through a signed link (the token is the credential)',
    {
      status: 200,
      contentType: 'application/octet-stream',
      description: 'The bytes, with their media type.',
    },
    { auth: 'none' },
  ),

  // Runs (contract §2).
  api(
    'post',
    `${V1}/agent/runs`,
    'Runs',
    'Create a run',
    json(runs.agentRunResponseSchema, 'The run was queued.'),
    { body: createRunBody, errors: [413, 422] },
  ),
  api(
    'post',
    `${V1}/agent/run`,
    'Runs',
    'Create a run (legacy path, same as POST /agent/runs)',
    json(runs.agentRunResponseSchema, 'The run was queued.'),
    { body: createRunBody, errors: [413, 422] },
  ),
  api(
    'get',
    `${V1}/agent/runs`,
    'Runs',
    'List runs (filters, sorts, cursor pagination; `metadata[<key>]=<value>` pairs also accepted)',
    json(runs.runListResponseSchema, 'One page of runs.'),
    { query: runListQueryObject },
  ),
  api('get', run, 'Runs', 'Retrieve a run', json(runs.runItemSchema, 'The run.')),
  api(
    'post',
    `${run}/cancel`,
    'Runs',
    'Cancel a run',
    { status: 200, contentType: 'text/plain', description: "The cancelled run's ID as plain text." },
    { errors: [409, 422] },
  ),
  api(
    'post',
    `${run}/followups`,
    'Runs',
    'Submit a follow-up message',
    json(runs.followupResponseSchema, 'Accepted and routed by the run state.'),
    { body: followupBody, errors: [409, 422] },
  ),
  api(
    'get',
    `${run}/timeline`,
    'Runs',
    'Timeline of setup and lifecycle events',
    json(runs.timelineResponseSchema, 'Events, oldest first.'),
  ),
  api(
    'get',
    `${run}/conversation`,
    'Runs',
    'Normalized conversation of a run',
    json(runs.conversationResponseSchema, 'The conversation (docs/runs.md).'),
  ),
  api('get', `${run}/transcript`, 'Runs', 'Raw transcript (redirect to a signed, time-limited link)', {
    status: 302,
    description: 'Location: the signed download URL.',
  }),
  api(
    'get',
    `${run}/handoff/attachments`,
    'Runs',
    'Handoff snapshot attachments of the latest ended execution',
    json(runs.handoffAttachmentsResponseSchema, 'Fresh signed download URLs; empty when none.'),
  ),
  api(
    'post',
    `${run}/scores`,
    'Runs',
    "Report a judge run's verdicts on a run",
    json(runs.scoresResponseSchema, 'Acceptance per verdict.'),
    { body: scoresBody },
  ),
  api(
    'get',
    `${V1}/agent/run-by-external-reference`,
    'Runs',
    'The run that reported an external reference',
    json(runs.runItemSchema, 'The run.'),
    { query: externalReferenceQuery },
  ),
  api(
    'get',
    `${V1}/agent/conversations/:conversationId`,
    'Conversations',
    'Normalized conversation',
    json(runs.conversationResponseSchema, 'The conversation (docs/runs.md).'),
  ),
  api(
    'get',
    `${V1}/agent/conversations/:conversationId/transcript`,
    'Conversations',
    'Raw transcript of a conversation',
    { status: 302, description: 'Location: the signed download URL.' },
  ),
  api(
    'get',
    `${V1}/agent/conversations/:conversationId/redirect`,
    'Conversations',
    'Should a conversation view redirect to its live shared session?',
    json(
      runs.conversationRedirectResponseSchema,
      '`session_id` while the run has a live shared session, else `{}`.',
    ),
    { auth: 'optional' },
  ),
  api(
    'get',
    `${V1}/agent/sessions/:sessionUuid/redirect`,
    'Conversations',
    'Should a shared session redirect to its conversation?',
    json(
      runs.sessionRedirectResponseSchema,
      '`conversation_id` once the sandbox finished and conversation data exists, else `{}`.',
    ),
    { auth: 'optional' },
  ),
  api(
    'post',
    `${V1}/harness-support/report-artifact`,
    'Harness support',
    "Report an artifact of the caller's run (run-scoped key)",
    json(r.reportedArtifactSchema, 'The stored artifact.', 201),
    { body: reportArtifactBody, errors: [413] },
  ),

  api(
    'post',
    `${V1}/harness-support/handoff-attachments`,
    'Harness support',
    "Store a handoff snapshot file of the caller's current execution (run-scoped key)",
    json(runs.uploadedHandoffAttachmentSchema, 'Stored.', 201),
    { body: handoffAttachmentBody, errors: [413] },
  ),

  // Artifacts (contract §5).
  api(
    'get',
    `${V1}/agent/artifacts/:artifactUid`,
    'Artifacts',
    'Retrieve an artifact',
    json(r.artifactResponseSchema, 'The artifact; file-like ones with a fresh signed URL.'),
    { auth: 'optional' },
  ),
  api(
    'get',
    `${V1}/agent/artifacts/:artifactUid/download`,
    'Artifacts',
    'Download an artifact (redirect to a signed link)',
    { status: 302, description: 'Location: the signed download URL.' },
    { auth: 'optional' },
  ),

  // Catalog (contract §1).
  api(
    'get',
    `${V1}/agent`,
    'Catalog',
    'List agents (skills)',
    json(r.agentListResponseSchema, 'Skills grouped by name.'),
    { query: listSkillsQuery },
  ),
  api(
    'get',
    `${V1}/agent/models`,
    'Catalog',
    'List models',
    json(r.modelListResponseSchema, 'Models and the default.'),
  ),
  api(
    'get',
    `${V1}/agent/connected-self-hosted-workers`,
    'Catalog',
    "The team's connected self-hosted workers",
    json(r.workerListResponseSchema, 'Connected workers.'),
  ),
  api(
    'get',
    `${V1}/insights`,
    'Insights',
    "The team's runs, usage, deliveries and capacity over time (the console's overview)",
    json(insightsResponseSchema, 'Aggregates in UTC buckets; empty buckets are left out.'),
    { query: insightsQuery },
  ),
  api(
    'get',
    `${V1}/agent/environments`,
    'Environments',
    'List environments',
    json(r.environmentListResponseSchema, 'Environments the caller can use.'),
    { query: listEnvironmentsQuery },
  ),
  api(
    'post',
    `${V1}/agent/environments`,
    'Environments',
    'Create an environment',
    json(r.cloudEnvironmentSchema, 'Created.', 201),
    { body: createEnvironmentBody },
  ),
  api(
    'get',
    environment,
    'Environments',
    'Retrieve an environment',
    json(r.cloudEnvironmentSchema, 'The environment.'),
  ),
  api(
    'put',
    environment,
    'Environments',
    'Update an environment',
    json(r.cloudEnvironmentSchema, 'Updated.'),
    { body: updateEnvironmentBody },
  ),
  api('delete', environment, 'Environments', 'Delete an environment', noContent),
  api(
    'get',
    `${environment}/guests`,
    'Environments',
    'List guests and pending invitations',
    json(r.guestListResponseSchema, 'Guests and invitations.'),
  ),
  api(
    'post',
    `${environment}/guests`,
    'Environments',
    'Invite a guest by e-mail',
    json(r.invitationSchema, 'Invited; the same answer whether or not the e-mail has an account.', 202),
    { body: invitationBody },
  ),
  api('delete', `${environment}/guests/:userId`, 'Environments', 'Remove a guest', noContent),
  api(
    'post',
    `${environment}/share-link`,
    'Environments',
    'Enable link sharing',
    json(r.shareLinkResponseSchema, 'The share link.'),
  ),
  api('delete', `${environment}/share-link`, 'Environments', 'Disable link sharing', noContent),
  api(
    'get',
    `${V1}/agent/environment-invitations`,
    'Environments',
    "List the caller's pending invitations",
    json(r.invitationListResponseSchema, 'Invitations addressed to the caller.'),
  ),
  api(
    'post',
    `${V1}/agent/environment-invitations/:invitationId/accept`,
    'Environments',
    'Accept an invitation',
    json(r.cloudEnvironmentSchema, 'The environment, now usable by the caller as a guest.'),
  ),
  api(
    'delete',
    `${V1}/agent/environment-invitations/:invitationId`,
    'Environments',
    'Decline or withdraw an invitation',
    noContent,
  ),
  api(
    'post',
    `${V1}/agent/environment-links/:token`,
    'Environments',
    'Redeem a share link',
    json(r.cloudEnvironmentSchema, 'The environment, now reachable by the caller.'),
  ),

  // Scheduled agents (contract §4).
  api(
    'post',
    `${V1}/agent/schedules`,
    'Schedules',
    'Create a scheduled agent',
    json(r.scheduledAgentItemSchema, 'Created.'),
    { body: createScheduleBody },
  ),
  api(
    'get',
    `${V1}/agent/schedules`,
    'Schedules',
    'List scheduled agents',
    json(r.scheduleListResponseSchema, 'Sorted by name.'),
  ),
  api(
    'get',
    schedule,
    'Schedules',
    'Retrieve a scheduled agent',
    json(r.scheduledAgentItemSchema, 'The schedule with its recent runs.'),
  ),
  api(
    'put',
    schedule,
    'Schedules',
    'Replace a scheduled agent',
    json(r.scheduledAgentItemSchema, 'Updated.'),
    { body: updateScheduleBody },
  ),
  api('delete', schedule, 'Schedules', 'Delete a scheduled agent', json(r.successResponseSchema, 'Deleted.')),
  api('post', `${schedule}/pause`, 'Schedules', 'Pause', json(r.scheduledAgentItemSchema, 'Paused.')),
  api('post', `${schedule}/resume`, 'Schedules', 'Resume', json(r.scheduledAgentItemSchema, 'Resumed.')),

  // Agent identities (contract §6).
  api(
    'post',
    `${V1}/agent/identities`,
    'Agent identities',
    'Create an agent identity',
    json(r.agentResponseSchema, 'Created.', 201),
    { body: createAgentBody },
  ),
  api(
    'get',
    `${V1}/agent/identities`,
    'Agent identities',
    'List agent identities',
    json(r.agentIdentityListResponseSchema, "The team's agents."),
  ),
  api(
    'get',
    identity,
    'Agent identities',
    'Retrieve an agent identity',
    json(r.agentResponseSchema, 'The agent.'),
  ),
  api(
    'put',
    identity,
    'Agent identities',
    'Update an agent identity',
    json(r.agentResponseSchema, 'Updated.'),
    { body: updateAgentBody },
  ),
  api('delete', identity, 'Agent identities', 'Delete an agent identity and its API keys', noContent),
  api(
    'post',
    `${identity}/api-keys`,
    'Agent identities',
    'Create an API key for an agent',
    json(r.createdApiKeySchema, 'Created; `key` is shown this once.', 201),
    { body: createKeyBody },
  ),
  api(
    'get',
    `${identity}/api-keys`,
    'Agent identities',
    "List an agent's API keys",
    json(r.apiKeyListResponseSchema, 'Keys, without secrets.'),
  ),
  api('delete', `${identity}/api-keys/:keyId`, 'Agent identities', 'Revoke an API key', noContent),

  // Factories, webhooks, automations, secrets (docs/webhooks.md).
  api('post', `${V1}/factories`, 'Factories', 'Create a factory', json(w.factorySchema, 'Created.', 201), {
    body: createFactoryBody,
  }),
  api(
    'get',
    `${V1}/factories`,
    'Factories',
    'List factories',
    json(w.factoryListResponseSchema, 'Factories.'),
  ),
  api('get', factory, 'Factories', 'Retrieve a factory', json(w.factorySchema, 'The factory.')),
  api('delete', factory, 'Factories', 'Delete a factory', noContent),
  api(
    'post',
    `${factory}/apply`,
    'Factories',
    'Apply definition files',
    json(w.applyResponseSchema, 'What was created, updated or left.'),
    { body: applyBody },
  ),
  api(
    'post',
    `${factory}/webhooks`,
    'Webhooks',
    'Create a webhook',
    json(w.webhookWithSecretSchema, 'Created; the secret is shown this once.', 201),
    { body: createWebhookBody },
  ),
  api(
    'get',
    `${factory}/webhooks`,
    'Webhooks',
    'List webhooks',
    json(w.webhookListResponseSchema, 'Webhooks.'),
  ),
  api('get', webhook, 'Webhooks', 'Retrieve a webhook', json(w.webhookSchema, 'The webhook.')),
  api('patch', webhook, 'Webhooks', 'Enable or disable a webhook', json(w.webhookSchema, 'Updated.'), {
    body: enabledBody,
  }),
  api('post', `${webhook}/enable`, 'Webhooks', 'Enable a webhook', json(w.webhookSchema, 'Enabled.')),
  api('post', `${webhook}/disable`, 'Webhooks', 'Disable a webhook', json(w.webhookSchema, 'Disabled.')),
  api('delete', webhook, 'Webhooks', 'Delete a webhook', noContent),
  api(
    'post',
    `${webhook}/rotate-secret`,
    'Webhooks',
    "Rotate a webhook's secret",
    json(w.webhookWithSecretSchema, 'Rotated; the new secret is shown this once.'),
    { body: rotateBody },
  ),
  api(
    'get',
    `${webhook}/deliveries`,
    'Webhooks',
    'Delivery log',
    json(w.deliveryListResponseSchema, 'Newest first.'),
    { query: deliveriesQuery },
  ),
  api(
    'get',
    `${webhook}/deliveries/:deliveryId`,
    'Webhooks',
    'One delivery with its payload and outcome',
    json(w.deliveryDetailSchema, 'The delivery.'),
  ),
  api(
    'post',
    `${webhook}/test-filter`,
    'Webhooks',
    'Test a filter against a stored delivery',
    json(w.testFilterResponseSchema, 'Would it trigger, and why.'),
    { body: testFilterBody },
  ),
  api(
    'post',
    `${factory}/automations`,
    'Automations',
    'Create an automation',
    json(w.automationSchema, 'Created.', 201),
    { body: createAutomationBody },
  ),
  api(
    'get',
    `${factory}/automations`,
    'Automations',
    'List automations',
    json(w.automationListResponseSchema, 'Automations.'),
  ),
  api(
    'get',
    automation,
    'Automations',
    'Retrieve an automation',
    json(w.automationSchema, 'The automation.'),
  ),
  api('patch', automation, 'Automations', 'Update an automation', json(w.automationSchema, 'Updated.'), {
    body: updateAutomationBody,
  }),
  api(
    'post',
    `${automation}/enable`,
    'Automations',
    'Enable an automation',
    json(w.automationSchema, 'Enabled.'),
  ),
  api(
    'post',
    `${automation}/disable`,
    'Automations',
    'Disable an automation',
    json(w.automationSchema, 'Disabled.'),
  ),
  api('delete', automation, 'Automations', 'Delete an automation', noContent),
  api(
    'post',
    `${V1}/secrets`,
    'Secrets',
    'Create a managed secret',
    json(w.secretSchema, 'Created (the value is never returned).', 201),
    { body: createSecretBody },
  ),
  api(
    'get',
    `${V1}/secrets`,
    'Secrets',
    'List managed secrets',
    json(w.secretListResponseSchema, 'Secrets, without values.'),
  ),
  api(
    'get',
    `${V1}/secrets/:name`,
    'Secrets',
    "A secret's metadata",
    json(w.secretSchema, 'The secret, without its value.'),
  ),
  api('put', `${V1}/secrets/:name`, 'Secrets', "Set a secret's value", json(w.secretSchema, 'Updated.'), {
    body: setSecretBody,
  }),
  api('delete', `${V1}/secrets/:name`, 'Secrets', 'Delete a managed secret', noContent),
  // Outgoing run events (docs/events.md).
  api(
    'post',
    `${V1}/event-endpoints`,
    'Events',
    'Create an event endpoint',
    json(ev.eventEndpointWithSecretSchema, 'Created; the signing secret is shown this once.', 201),
    { body: ev.createEventEndpointBody },
  ),
  api(
    'get',
    `${V1}/event-endpoints`,
    'Events',
    "List the team's event endpoints",
    json(ev.eventEndpointListResponseSchema, 'Endpoints, without secrets, oldest first.'),
  ),
  api(
    'get',
    eventEndpoint,
    'Events',
    'Retrieve an event endpoint',
    json(ev.eventEndpointSchema, 'The endpoint.'),
  ),
  api(
    'patch',
    eventEndpoint,
    'Events',
    'Update an event endpoint (url, event types, description, enabled)',
    json(ev.eventEndpointSchema, 'Updated.'),
    { body: ev.updateEventEndpointBody },
  ),
  api('delete', eventEndpoint, 'Events', 'Delete an event endpoint', noContent),
  api(
    'post',
    `${eventEndpoint}/rotate-secret`,
    'Events',
    "Rotate an endpoint's signing secret (the old one signs alongside for a grace period)",
    json(ev.eventEndpointWithSecretSchema, 'Rotated; the new secret is shown this once.'),
  ),
  api(
    'get',
    `${eventEndpoint}/attempts`,
    'Events',
    "An endpoint's delivery attempts, newest first",
    json(ev.eventAttemptListResponseSchema, 'Attempts.'),
    { query: ev.eventAttemptsQuery },
  ),
  api(
    'post',
    `${eventEndpoint}/events/:eventId/replay`,
    'Events',
    'Send one event to the endpoint again (same webhook-id)',
    json(z.object({ event_id: z.string(), status: z.literal('pending') }), 'Queued for delivery.', 202),
  ),
  // Integrations (docs/integrations.md).
  api(
    'post',
    `${V1}/integrations/github-apps`,
    'Integrations',
    'Register a GitHub App (its key is checked against GitHub first)',
    json(integ.githubAppSchema, "Registered; set webhook_url as the App's webhook URL.", 201),
    { body: integ.createGitHubAppBody },
  ),
  api(
    'get',
    `${V1}/integrations/github-apps`,
    'Integrations',
    "List the team's GitHub Apps",
    json(integ.githubAppListResponseSchema, 'Apps, without credentials, oldest first.'),
  ),
  api('get', githubApp, 'Integrations', 'Retrieve a GitHub App', json(integ.githubAppSchema, 'The App.')),
  api('delete', githubApp, 'Integrations', 'Remove a GitHub App and its webhook', noContent),
  api(
    'post',
    `${V1}/integrations/slack-apps`,
    'Integrations',
    'Register a Slack app (its bot token is checked with auth.test first)',
    json(
      slackApps.slackAppSchema,
      "Registered; set webhook_url as the app's Events and slash command Request URL.",
      201,
    ),
    { body: slackApps.createSlackAppBody },
  ),
  api(
    'get',
    `${V1}/integrations/slack-apps`,
    'Integrations',
    "List the team's Slack apps",
    json(slackApps.slackAppListResponseSchema, 'Apps, without credentials, oldest first.'),
  ),
  api('get', slackApp, 'Integrations', 'Retrieve a Slack app', json(slackApps.slackAppSchema, 'The app.')),
  api('delete', slackApp, 'Integrations', 'Remove a Slack app and its webhook', noContent),
];
