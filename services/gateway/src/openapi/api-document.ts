import {
  extendZodWithOpenApi,
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { PROBLEM_CONTENT_TYPE } from '@conveyor/errors';
import { problemSchema } from '../schemas/common-schemas';
import { OPERATIONS, type Operation } from './operations';

extendZodWithOpenApi(z);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (`invalid_request`); `detail` names the parameter.',
  401: 'Missing or invalid API key (`authentication_required`).',
  403: 'Not allowed (`not_authorized`, `feature_not_available`, ...).',
  404: 'Unknown, or not visible to the caller (`resource_not_found`).',
  409: 'State conflict (`conflict`, retryable).',
  413: 'Body too large (`payload_too_large`).',
  422: 'Not supported for this resource (`operation_not_supported`).',
  429: 'Rate limited (`rate_limited`); see Retry-After.',
  500: 'Unexpected error (`internal_error`).',
  503: 'A dependency is unavailable (`resource_unavailable`, retryable).',
};

/** `/v1/agent/runs/:runId` → `/v1/agent/runs/{runId}`. */
export const toOpenApiPath = (expressPath: string): string =>
  expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const pathParams = (path: string): string[] => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

const problem = (description: string) => ({
  description,
  content: { [PROBLEM_CONTENT_TYPE]: { schema: problemSchema } },
});

function errorStatuses(op: Operation): number[] {
  const statuses = new Set<number>([500, 503, 429, ...(op.errors ?? [])]);
  if (op.query || op.body || pathParams(op.path).length) statuses.add(400);
  if (op.auth !== 'none') statuses.add(401).add(403);
  if (pathParams(op.path).length) statuses.add(404);
  return [...statuses].sort();
}

function routeConfig(op: Operation): RouteConfig {
  const params = pathParams(op.path);
  const success = op.success;
  const successResponse =
    'schema' in success
      ? { description: success.description, content: { 'application/json': { schema: success.schema } } }
      : 'contentType' in success
        ? {
            description: success.description,
            content: { [success.contentType]: { schema: { type: 'string' as const } } },
          }
        : success.status === 302
          ? {
              description: success.description,
              headers: { Location: { description: 'Where to go.', schema: { type: 'string' as const } } },
            }
          : { description: success.description };
  return {
    method: op.method,
    path: toOpenApiPath(op.path),
    operationId: `${op.method}${toOpenApiPath(op.path)
      .replace(/[{}]/g, '')
      .replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: op.summary,
    tags: [op.tag],
    security: op.auth === 'api_key' ? [{ bearer: [] }] : op.auth === 'optional' ? [{}, { bearer: [] }] : [],
    request: {
      ...(params.length
        ? { params: z.object(Object.fromEntries(params.map((p) => [p, z.string().min(1)]))) }
        : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(op.body ? { body: { required: true, content: { 'application/json': { schema: op.body } } } } : {}),
    },
    responses: {
      [String(success.status)]: successResponse,
      ...('json' in success && success.json
        ? {
            [String(success.json.status)]: {
              description: success.json.description,
              content: { 'application/json': { schema: success.json.schema } },
            },
          }
        : {}),
      ...Object.fromEntries(
        errorStatuses(op).map((s) => [
          String(s),
          s === 503 && op.unavailable
            ? {
                description: 'Not ready: a dependency is down or the service drains.',
                content: { 'application/json': { schema: op.unavailable } },
              }
            : problem(ERROR_DESCRIPTIONS[s] ?? 'Error.'),
        ]),
      ),
      default: problem('Any other error, in the same problem+json shape.'),
    },
  };
}

/**
 * The OpenAPI 3.1 document of the gateway, generated from the same zod schemas the handlers validate requests
 * with and the tests validate responses with (one source of truth; see docs/api-surface.md).
 */
export function buildApiDocument(): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'Authorization: Bearer <API_KEY>',
  });
  for (const op of OPERATIONS) registry.registerPath(routeConfig(op));
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Conveyor API',
      version: '1.0.0',
      description:
        'Wire-compatible with the Oz / Warp Platform API. Every `/v1` path is also served under `/api/v1`. Errors are RFC 7807 problem+json.',
    },
    servers: [{ url: '/' }],
  });
  return document as unknown as Record<string, unknown>;
}
