import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startPlatform, type RunningPlatform } from './platform';
import { helperOf, identity } from './process-identity';
import { apiCall, waitForRunState } from './run-waits';

// A pool runner on the local sandbox whose privileged helper dies: the run it held died with the helper, so the run
// ends with a code naming the cause (never stranded INPROGRESS), and the runner exits non-zero for its supervisor.

describe('a runner whose privileged sandbox helper dies', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    platform = await startPlatform({
      env: {
        RUN_SANDBOX: 'bubblewrap',
        WORKSPACE_ROOT: path.join(os.tmpdir(), `conveyor-helper-loss-${randomUUID()}`),
        SANDBOX_STATE_DIR: path.join(os.tmpdir(), `conveyor-helper-loss-state-${randomUUID()}`),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('ends the run it held in ERROR naming the lost helper and exits non-zero', async () => {
    const runner = platform.process('runner')!;
    const exited = new Promise<number | null>((resolve) => runner.once('exit', (code) => resolve(code)));
    expect(identity(runner.pid!).uid).not.toBe(0);
    const created = await apiCall(platform, 'POST', '/agent/runs', { prompt: '@demo sleep 120000' });
    const runId = created.body.run_id as string;
    await waitForRunState(platform, runId, ['INPROGRESS']);

    process.kill(helperOf(runner.pid!)!, 'SIGKILL');

    expect(await exited).not.toBe(0);
    const ended = await waitForRunState(platform, runId, ['ERROR']);
    expect(ended.status_message).toMatchObject({
      error_code: 'resource_unavailable',
      message: expect.stringMatching(/privileged sandbox helper was lost/),
    });
  }, 120_000);
});
