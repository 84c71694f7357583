import { z } from 'zod';
import { json, type OperationSpec } from '../routes/endpoint';
import { ENDPOINTS } from '../routes/endpoints';

/**
 * One operation of the public API with its full path (`/v1/agent/runs/:runId`, express's form): the OpenAPI
 * document and the test-time response validator read these.
 */
export interface Operation extends OperationSpec {
  path: string;
}

/** `/readyz` answers its checks with 200 and 503 alike. */
const readinessBody = z.object({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.unknown()) });

/** Served by `@conveyor/runtime`'s `serviceShell`, outside /v1; documented here. */
const SHELL_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness',
    success: json(z.object({ status: z.literal('ok') }), 'The process is alive.'),
    auth: 'none',
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness (503 while a dependency is down or the gateway drains)',
    success: json(readinessBody, 'Ready.'),
    auth: 'none',
    unavailable: readinessBody,
  },
  {
    method: 'get',
    path: '/readyz/local',
    tag: 'Operations',
    summary: "Readiness of this replica only (503 only while it drains): the chart's readiness probe",
    success: json(readinessBody, 'Ready.'),
    auth: 'none',
    unavailable: readinessBody,
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    success: { status: 200, contentType: 'text/plain', description: 'Prometheus text format.' },
    auth: 'none',
  },
];

export const OPERATIONS: Operation[] = [
  ...SHELL_OPERATIONS,
  ...ENDPOINTS.map(({ handle: _handle, readQuery: _readQuery, runScopedKey: _runKey, ...spec }) => ({
    ...spec,
    path: `/v1${spec.path}`,
  })),
];
