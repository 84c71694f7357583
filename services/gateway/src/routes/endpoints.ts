import type { Endpoint } from './endpoint';
import { artifactEndpoints } from './artifact-routes';
import { blobEndpoints } from './blob-routes';
import { catalogEndpoints } from './catalog-routes';
import { environmentEndpoints } from './environment-routes';
import { eventEndpointEndpoints } from './event-endpoint-routes';
import { harnessSupportEndpoints } from './harness-support-routes';
import { identityEndpoints } from './identity-routes';
import { insightsEndpoints } from './insights-routes';
import { integrationEndpoints } from './integration-routes';
import { linearIntegrationEndpoints } from './linear-integration-routes';
import { openapiEndpoints } from './openapi-routes';
import { redirectEndpoints } from './redirect-routes';
import { runInspectionEndpoints } from './run-inspection-routes';
import { runLifecycleEndpoints } from './run-lifecycle-routes';
import { runListEndpoints } from './run-list-routes';
import { runScoringEndpoints } from './run-scoring-routes';
import { scheduleEndpoints } from './schedule-routes';
import { slackAppEndpoints } from './slack-app-routes';
import { webhookAutomationEndpoints } from './webhook-automation-routes';
import { webhookFactoryEndpoints } from './webhook-factory-routes';
import { webhookEndpoints } from './webhook-routes';
import { webhookSecretEndpoints } from './webhook-secret-routes';
import { workerEndpoints } from './worker-routes';

/**
 * Every endpoint of the public API under /v1: the one list the router (app.ts, `endpointRouter`), the OpenAPI
 * document and the test-time response validator are built from. A new endpoint is one `endpoint({...})` in its
 * resource's file; a new resource family is one more line here. Express matches in this order.
 */
export const ENDPOINTS: readonly Endpoint[] = [
  ...blobEndpoints,
  ...openapiEndpoints,
  ...artifactEndpoints,
  ...redirectEndpoints,
  ...harnessSupportEndpoints,
  ...runScoringEndpoints,
  ...workerEndpoints,
  ...insightsEndpoints,
  ...runListEndpoints,
  ...runInspectionEndpoints,
  ...runLifecycleEndpoints,
  ...scheduleEndpoints,
  ...webhookFactoryEndpoints,
  ...webhookEndpoints,
  ...webhookAutomationEndpoints,
  ...webhookSecretEndpoints,
  ...eventEndpointEndpoints,
  ...integrationEndpoints,
  ...slackAppEndpoints,
  ...linearIntegrationEndpoints,
  ...catalogEndpoints,
  ...environmentEndpoints,
  ...identityEndpoints,
];
