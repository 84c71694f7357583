import { Redis } from 'ioredis';
import { testApp } from '../test-support/test-app';
import { buildApiDocument, toOpenApiPath } from './api-document';
import { canonicalPath, findOperation } from './find-operation';
import { listRoutes } from './list-routes';

const document = buildApiDocument() as {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};
const documented = new Set(
  Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)),
);

describe('the OpenAPI document', () => {
  // Routes are only listed, never called: nothing connects.
  const redis = new Redis({ lazyConnect: true });
  const { app, api } = testApp(redis);
  // The web console's routes (/console, docs/console.md) are the console's own, not the public API.
  const served = [
    ...new Set(
      listRoutes(app)
        .filter((route) => !route.split(' ')[1]!.startsWith('/console'))
        .map((route) => {
          const [method, path] = route.split(' ') as [string, string];
          return `${method} ${toOpenApiPath(canonicalPath(path))}`;
        }),
    ),
  ];
  afterAll(() => {
    api.close();
    redis.disconnect();
  });

  it('is OpenAPI 3.1', () => {
    expect(document.openapi).toBe('3.1.0');
  });

  it('documents every route the gateway serves (read from express)', () => {
    expect(served.length).toBeGreaterThan(60);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });

  it('documents no route the gateway does not serve', () => {
    expect([...documented].filter((route) => !served.includes(route))).toEqual([]);
  });

  it('gives every operation its problem+json error responses', () => {
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect({
          route: `${method} ${path}`,
          hasDefault: 'default' in op.responses,
          has500: '500' in op.responses,
        }).toEqual({
          route: `${method} ${path}`,
          hasDefault: true,
          has500: true,
        });
      }
    }
  });

  it('matches request paths to operations, /api/v1 as an alias of /v1', () => {
    expect(findOperation('GET', '/api/v1/agent/runs/abc')?.path).toBe('/v1/agent/runs/:runId');
    expect(findOperation('GET', '/v1/agent/run-by-external-reference')?.path).toBe(
      '/v1/agent/run-by-external-reference',
    );
    expect(findOperation('POST', '/v1/agent/runs')?.path).toBe('/v1/agent/runs');
    expect(findOperation('DELETE', '/v1/agent/runs')).toBeUndefined();
  });
});
