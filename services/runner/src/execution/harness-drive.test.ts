import type { RunEvent } from '@conveyor/run-events';
import { SetupFailure, type Harness, type HarnessInput } from '../harness/harness';
import type { ModelAccessGrant } from '../model-proxy/model-access-grant';
import { fakeContext, fakeSandbox } from '../test-support/execution-fakes';
import { driveHarness } from './harness-drive';

const environment = { repositories: [], setup_commands: ['make deps'], allowed_hosts: [] };
/** These environments have no repository the platform clones. */
const noFetch = () => Promise.reject(new Error('nothing to fetch'));

/** A harness whose agent emits `emitted` and succeeds; `prepare` may throw. */
function fakeHarness(prepare: (input: HarnessInput) => Promise<void> = async () => undefined) {
  const runs: HarnessInput[] = [];
  const harness: Harness = {
    prepare,
    run: async (input, ctx) => {
      runs.push(input);
      ctx.emit({ kind: 'usage', input_tokens: 1, output_tokens: 1 } as never);
      ctx.emit({ kind: 'log', level: 'info', text: 'agent at work' });
      return { state: 'SUCCEEDED', message: 'done' };
    },
  };
  return { harness, runs };
}

const setupSteps = (events: RunEvent[]) => events.flatMap((e) => (e.kind === 'setup_step' ? [e] : []));

describe('driveHarness', () => {
  it('runs the setup commands, starts the harness, moves the run to INPROGRESS and runs the agent', async () => {
    const { ctx, events } = fakeContext({ harness: 'demo', prompt: 'fix it', api_base_url: '' });
    const { sandbox, commands } = fakeSandbox();
    const { harness, runs } = fakeHarness();
    const driven = await driveHarness(ctx, harness, undefined, sandbox, environment, noFetch);
    expect(driven).toMatchObject({ ran: { outcome: { state: 'SUCCEEDED' } } });
    expect(commands).toEqual([['/bin/sh', '-c', 'make deps']]);
    expect(setupSteps(events).map((s) => `${s.step} ${s.status}`)).toEqual([
      'setup_commands started',
      'setup_commands succeeded',
      'harness_start started',
      'harness_start succeeded',
    ]);
    expect(events).toContainEqual({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' });
    expect(runs[0]).toMatchObject({ runId: 'run-1', prompt: 'fix it', workspaceDir: '/workspace' });
    // Without model access through the proxy, the CLI's own usage is the run's.
    expect(events.some((e) => e.kind === 'usage')).toBe(true);
  });

  it('fails the run as a setup failure when a setup command fails, without starting the agent', async () => {
    const { ctx, events } = fakeContext();
    const { sandbox } = fakeSandbox({ exitCode: () => 2 });
    const { harness, runs } = fakeHarness();
    const driven = await driveHarness(ctx, harness, undefined, sandbox, environment, noFetch);
    expect(driven).toEqual({
      failed: expect.objectContaining({
        state: 'FAILED',
        errorCode: 'environment_setup_failed',
        setupFailed: true,
      }),
    });
    expect(runs).toEqual([]);
    expect(setupSteps(events).at(-1)).toMatchObject({ step: 'setup_commands', status: 'failed' });
  });

  it('names the harness start when the harness’s own preparation fails', async () => {
    const { ctx, events } = fakeContext();
    const { sandbox } = fakeSandbox();
    const { harness } = fakeHarness(async () => {
      throw new SetupFailure('the CLI is not installed');
    });
    const driven = await driveHarness(ctx, harness, undefined, sandbox, environment, noFetch);
    expect(driven).toMatchObject({ failed: { message: 'the CLI is not installed', setupFailed: true } });
    expect(setupSteps(events).at(-1)).toMatchObject({ step: 'harness_start', status: 'failed' });
  });

  it('runs no setup in a debug session and leaves the run’s state alone', async () => {
    const { ctx, events } = fakeContext({ debug_session: true });
    const { sandbox, commands } = fakeSandbox();
    const { harness } = fakeHarness();
    await driveHarness(ctx, harness, undefined, sandbox, environment, noFetch);
    expect(commands).toEqual([]);
    expect(events.some((e) => e.kind === 'state_changed')).toBe(false);
  });

  it('hands the harness its model access and drops the CLI’s own usage count (the proxy meters it)', async () => {
    const { ctx, events } = fakeContext({ config_json: '{"harness":{"model_id":"m"}}' });
    const { sandbox } = fakeSandbox();
    const { harness, runs } = fakeHarness();
    const access = { baseUrls: { anthropic: 'a', openai: 'o', gemini: 'g' }, token: 't', model: 'm' };
    const grant = { access: () => access } as unknown as ModelAccessGrant;
    await driveHarness(ctx, harness, grant, sandbox, environment, noFetch);
    expect(runs[0]!.modelAccess).toBe(access);
    expect(events.some((e) => e.kind === 'usage')).toBe(false);
  });
});
