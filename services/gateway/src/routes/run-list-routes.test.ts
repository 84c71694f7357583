import { CALLER, problemOf, PUBLIC_URL, routeHarness } from '../test-support/route-harness';
import { runOutput } from '../test-support/orchestrator-answers';
import { runListEndpoints } from './run-list-routes';

// The route as a whole (the query's own rules are in schemas/run-list-query.test.ts): a query string becomes one
// ListRuns call for the caller, the page becomes the contract's body, and a refusal is a problem naming its parameter.
describe('run list route', () => {
  const { call, send, onlyCall, itMapsOrchestratorErrors } = routeHarness(runListEndpoints);

  const page = (overrides: { has_next_page?: boolean; next_cursor?: string } = {}) => ({
    runs: [
      runOutput({ run_id: 'run-1', title: 'first' }),
      runOutput({ run_id: 'run-2', state: 'SUCCEEDED' }),
    ],
    has_next_page: false,
    next_cursor: '',
    ...overrides,
  });

  it('hands the query string to one ListRuns call with typed fields, for the caller', async () => {
    call.mockResolvedValue(page());
    const res = await send(
      'GET',
      '/agent/runs?limit=2&state=QUEUED&state=INPROGRESS&sort_by=created_at&sort_order=asc&source=API' +
        '&created_after=2026-11-01T00:00:00Z&metadata%5Bticket%5D=T-1&skill=acme%2Fapi%3ASKILL.md&q=%20deploy%20' +
        '&cursor=c-1&name=',
    );
    expect(res.status).toBe(200);
    const [service, method, request] = onlyCall();
    expect([service, method]).toEqual(['runs', 'ListRuns']);
    expect(request).toMatchObject({
      caller: CALLER,
      limit: 2,
      cursor: 'c-1',
      states: ['QUEUED', 'INPROGRESS'],
      sort_by: 'created_at',
      sort_order: 'asc',
      source: 'API',
      created_after: '2026-11-01T00:00:00Z',
      metadata: { ticket: 'T-1' },
      skill_spec: 'acme/api:SKILL.md',
      q: 'deploy',
      name: '',
    });
  });

  it('answers the page as RunItems with page_info and the next cursor', async () => {
    call.mockResolvedValue(page({ has_next_page: true, next_cursor: 'c-2' }));
    const res = await send('GET', '/agent/runs?limit=2');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { runs: Array<Record<string, unknown>>; page_info: unknown };
    expect(body.page_info).toEqual({ has_next_page: true, next_cursor: 'c-2' });
    expect(body.runs.map((r) => [r.run_id, r.task_id, r.state])).toEqual([
      ['run-1', 'run-1', 'QUEUED'],
      ['run-2', 'run-2', 'SUCCEEDED'],
    ]);
    expect(body.runs[0]).toMatchObject({
      title: 'first',
      session_link: `${PUBLIC_URL}/console/runs/run-1`,
      scope: { type: 'Team', uid: 'team1' },
    });
  });

  it('leaves next_cursor out on the last page', async () => {
    call.mockResolvedValue(page());
    const res = await send('GET', '/agent/runs');
    expect(((await res.json()) as { page_info: unknown }).page_info).toEqual({ has_next_page: false });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['state=DONE', 'state'],
    ['sort_by=colour', 'sort_by'],
    ['created_after=yesterday', 'created_after'],
    ['environment_id=nope', 'environment_id'],
    ['metadata=ticket', 'metadata'],
    ['metadata%5Bbad%20key%5D=v', 'metadata[bad key]'],
  ])(
    'refuses ?%s with a 400 problem naming %s, without calling the orchestrator',
    async (query, parameter) => {
      const problem = await problemOf(await send('GET', `/agent/runs?${query}`), 400);
      expect(problem).toMatchObject({ status: 400, detail: expect.stringContaining(parameter) });
      expect(call).not.toHaveBeenCalled();
    },
  );

  itMapsOrchestratorErrors([
    ['invalid_request', 400, 'GET', '/agent/runs?cursor=stale'],
    ['not_authorized', 403, 'GET', '/agent/runs'],
    ['resource_unavailable', 503, 'GET', '/agent/runs'],
  ]);
});
