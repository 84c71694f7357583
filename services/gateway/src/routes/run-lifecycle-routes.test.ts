import { AppError } from '@conveyor/errors';
import { CALLER, problemOf, refusedPaths, routeHarness } from '../test-support/route-harness';
import { runLifecycleEndpoints } from './run-lifecycle-routes';

const PNG = Buffer.from('not really a png').toString('base64');

describe('run lifecycle routes', () => {
  const { call, send, onlyCall } = routeHarness(runLifecycleEndpoints);

  it('maps a create request, with the published SDK images, to one CreateRun call and answers the run', async () => {
    call.mockResolvedValue({ run_id: 'run-1', state: 'QUEUED', at_capacity: false });
    const res = await send('POST', '/agent/runs', {
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
    const [service, method, request] = onlyCall();
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
    expect(await refusedPaths(await send('POST', '/agent/runs', { prompt: '   ', config: {} }))).toContain(
      'prompt',
    );
    expect(call).not.toHaveBeenCalled();
  });

  it("answers the orchestrator's typed errors with their status and problem body", async () => {
    call.mockRejectedValueOnce(new AppError('resource_not_found', 'Run run-x not found'));
    expect(await problemOf(await send('GET', '/agent/runs/run-x'), 404)).toMatchObject({
      status: 404,
      detail: 'Run run-x not found',
    });

    call.mockRejectedValueOnce(new AppError('conflict', 'The run has not started yet'));
    await problemOf(await send('POST', '/agent/runs/run-y/cancel'), 409);
  });

  it('answers cancel with the run ID as plain text (contract §2.10)', async () => {
    call.mockResolvedValue({ run_id: 'run-2' });
    const res = await send('POST', '/agent/runs/run-2/cancel');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('run-2');
    expect(onlyCall()).toEqual(['runs', 'CancelRun', { caller: CALLER, run_id: 'run-2' }]);
  });
});
