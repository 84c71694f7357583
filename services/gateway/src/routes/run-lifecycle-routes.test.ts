import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { AppError } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import type { Caller__Output } from '@conveyor/proto';
import { errorHandler, notFoundHandler, requestContext } from '@conveyor/runtime';
import type { OrchestratorApi } from '../orchestrator-api';
import { runLifecycleRoutes } from './run-lifecycle-routes';

// The route layer at the level of its rules: the public request becomes one gRPC call with typed fields, the
// answer becomes the contract's body, and an orchestrator error becomes its status and problem body. The
// orchestrator is a fake port; the HTTP is real (express on a loopback socket).
const CALLER = {
  team_id: 'team-1',
  principal_id: 'user-1',
  principal_type: 'USER',
} as unknown as Caller__Output;
const PNG = Buffer.from('not really a png').toString('base64');

describe('run lifecycle routes', () => {
  let server: Server;
  let base: string;
  const call = jest.fn();

  beforeAll(async () => {
    const app = express();
    app.use(requestContext(createLogger({ service: 'test', level: 'silent' })));
    app.use(express.json());
    app.use((req, _res, next) => {
      req.caller = CALLER;
      next();
    });
    app.use(runLifecycleRoutes({ call } as unknown as OrchestratorApi, () => 'http://gateway.test'));
    app.use(notFoundHandler);
    app.use(errorHandler());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => call.mockReset());

  const post = (path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('maps a create request, with the published SDK images, to one CreateRun call and answers the run', async () => {
    call.mockResolvedValue({ run_id: 'run-1', state: 'QUEUED', at_capacity: false });
    const res = await post('/agent/runs', {
      prompt: 'fix the test',
      config: { model_id: 'm' },
      metadata: { ticket: 'T-1' },
      images: [{ data: PNG, mime_type: 'image/png' }],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      run_id: 'run-1',
      task_id: 'run-1',
      state: 'QUEUED',
      at_capacity: false,
    });
    expect(call).toHaveBeenCalledTimes(1);
    const [service, method, request] = call.mock.calls[0] as [string, string, Record<string, unknown>];
    expect([service, method]).toEqual(['runs', 'CreateRun']);
    expect(request).toMatchObject({
      caller: CALLER,
      prompt: 'fix the test',
      config_json: JSON.stringify({ model_id: 'm' }),
      mode: 'normal',
      metadata: { ticket: 'T-1' },
      source: 'API',
      attachments: [{ file_name: 'image-1.png', mime_type: 'image/png', data: Buffer.from(PNG, 'base64') }],
    });
  });

  it('refuses a body the contract refuses with 400 and its field, without calling the orchestrator', async () => {
    const res = await post('/agent/runs', { prompt: '   ', config: {} });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { errors: Array<{ path: string }> };
    expect(problem.errors.map((e) => e.path)).toContain('prompt');
    expect(call).not.toHaveBeenCalled();
  });

  it("answers the orchestrator's typed errors with their status and problem body", async () => {
    call.mockRejectedValueOnce(new AppError('resource_not_found', 'Run run-x not found'));
    const missing = await fetch(`${base}/agent/runs/run-x`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 404, detail: 'Run run-x not found' });

    call.mockRejectedValueOnce(new AppError('conflict', 'The run has not started yet'));
    const early = await post('/agent/runs/run-y/cancel');
    expect(early.status).toBe(409);
  });

  it('answers cancel with the run ID as plain text (contract §2.10)', async () => {
    call.mockResolvedValue({ run_id: 'run-2' });
    const res = await post('/agent/runs/run-2/cancel');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('run-2');
    expect(call.mock.calls[0]?.slice(0, 3)).toEqual([
      'runs',
      'CancelRun',
      { caller: CALLER, run_id: 'run-2' },
    ]);
  });
});
