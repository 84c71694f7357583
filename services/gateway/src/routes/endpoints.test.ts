import { CALLER, routeHarness } from '../test-support/route-harness';
import { ENDPOINTS } from './endpoints';

/** A request path for an endpoint: every path parameter filled in. */
const concrete = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, 'x1');
const runScoped = ENDPOINTS.filter((e) => e.runScopedKey);
const VALID_BODIES: Record<string, unknown> = {
  '/harness-support/report-artifact': { artifact_type: 'PLAN', data: {} },
  '/harness-support/handoff-attachments': { filename: 'a.txt', content_base64: 'YQ==' },
  '/agent/runs/:runId/scores': { verdicts: [{}] },
};

describe('the endpoint table', () => {
  it('names each method and path once', () => {
    const routes = ENDPOINTS.map((e) => `${e.method} ${e.path}`);
    expect(routes.length).toBeGreaterThan(80);
    expect(routes.filter((route, i) => routes.indexOf(route) !== i)).toEqual([]);
  });

  it('lets run-scoped keys reach harness support and judge scores only', () => {
    expect(runScoped.map((e) => `${e.method} ${e.path}`).sort()).toEqual([
      'post /agent/runs/:runId/scores',
      'post /harness-support/handoff-attachments',
      'post /harness-support/report-artifact',
    ]);
  });
});

describe('a run-scoped key at the router built from the table', () => {
  const { call, send } = routeHarness(ENDPOINTS, { ...CALLER, run_id: 'run-1' });

  it.each(ENDPOINTS.filter((e) => !e.runScopedKey).map((e) => [e.method.toUpperCase(), e.path] as const))(
    'is refused on %s %s before the orchestrator is asked',
    async (method, path) => {
      const res = await send(method, concrete(path), method === 'GET' ? undefined : {});
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ type: expect.stringMatching(/not_authorized$/) });
      expect(call).not.toHaveBeenCalled();
    },
  );

  it.each(runScoped.map((e) => [e.method.toUpperCase(), e.path] as const))(
    'passes %s %s on to its handler',
    async (method, path) => {
      call.mockRejectedValue(new Error('the handler asked'));
      await send(method, concrete(path), VALID_BODIES[path]);
      expect(call).toHaveBeenCalled();
    },
  );
});
