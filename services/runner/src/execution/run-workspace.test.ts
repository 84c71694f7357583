import { SandboxUnavailable } from '../sandbox/run-sandbox';
import { fakeBackend, fakeContext, fakeSandbox } from '../test-support/execution-fakes';
import type { Completion } from './execution-context';
import { RunWorkspaces } from './run-workspace';

const limits = { wallClockMs: 60_000, maxProcesses: 64, memoryBytes: 2 ** 30, diskBytes: 2 ** 30 };
const settings = { allowedHosts: ['registry.npmjs.org'], limits, debugRetentionMs: 60_000 };
const environment = {
  repositories: [{ url: 'https://git.example.com/acme/app.git' }],
  setup_commands: [],
  allowed_hosts: ['pypi.org'],
};
const succeeded: Completion = { state: 'SUCCEEDED', message: 'done' };
const released = (events: Array<{ kind: string }>) => events.filter((e) => e.kind === 'workspace_released');

describe('RunWorkspaces', () => {
  afterEach(() => jest.useRealTimers());

  it('prepares the sandbox with the run’s policy, lays out the workspace, drives, and deletes the workspace', async () => {
    const { sandbox, commands, destroyed } = fakeSandbox();
    const { backend, policies } = fakeBackend(sandbox);
    const { ctx, events } = fakeContext({
      attachments: [{ file_name: '../notes.txt', data: Buffer.from('n'), mime_type: 'text/plain' }],
    } as never);
    const drive = jest.fn(async () => succeeded);
    expect(await new RunWorkspaces(backend, settings).within(ctx, environment, undefined, drive)).toBe(
      succeeded,
    );
    expect(policies[0]).toMatchObject({
      runId: 'run-1',
      execution: 1,
      allowedHosts: ['registry.npmjs.org', 'pypi.org', 'git.example.com'],
      endpoints: [],
      limits,
    });
    expect(commands[0]).toEqual(['mkdir', '-p', '--', '/workspace/.home', '/workspace/attachments']);
    expect(drive).toHaveBeenCalledWith(sandbox);
    expect(destroyed).toEqual([{ keepWorkspace: false }]);
    expect(events[0]).toEqual({ kind: 'setup_step', step: 'workspace', status: 'started' });
    expect(events[1]).toEqual({
      kind: 'setup_step',
      step: 'workspace',
      status: 'succeeded',
      detail: '1 attachment(s), sandbox fake',
    });
    expect(released(events)).toEqual([
      { kind: 'workspace_released', disk_bytes: 4096, kept_for_debug: false },
    ]);
  });

  it('leaves the directories to the agent’s launch only when nothing runs in the sandbox before the agent', async () => {
    const bare = { ...environment, repositories: [] };
    const laidOut = async (
      env: typeof environment,
      options: { attachments?: boolean; startedFrom?: string; resume?: boolean },
    ) => {
      const { sandbox, commands } = fakeSandbox();
      const { backend } = fakeBackend({ ...sandbox, startedFrom: options.startedFrom });
      const { ctx } = fakeContext(
        options.attachments
          ? ({
              attachments: [{ file_name: 'a.txt', data: Buffer.from('a'), mime_type: 'text/plain' }],
            } as never)
          : {},
      );
      const drive = jest.fn(async () => succeeded);
      await new RunWorkspaces(backend, settings).within(ctx, env, undefined, drive, {
        launchLaysOut: true,
        resumeFromCheckpoint: options.resume === true,
      });
      expect(drive).toHaveBeenCalled();
      return commands.some((c) => c[0] === 'mkdir');
    };
    expect(await laidOut(bare, {})).toBe(false);
    expect(await laidOut(environment, { startedFrom: 'snap_1' })).toBe(false);
    // Setup from scratch, attachments and a checkpoint's workspace are laid out first, as before.
    expect(await laidOut(environment, {})).toBe(true);
    expect(await laidOut(bare, { attachments: true })).toBe(true);
    expect(await laidOut(bare, { resume: true })).toBe(true);
  });

  it("keeps the sandbox's own credentials (a run gateway key) out of the run's events", async () => {
    const { sandbox } = fakeSandbox();
    const { backend } = fakeBackend({ ...sandbox, secrets: ['cvk_gateway-key'] });
    const { ctx, events } = fakeContext();
    await new RunWorkspaces(backend, settings).within(ctx, environment, undefined, async () => {
      ctx.reporter.emit({
        kind: 'log',
        level: 'info',
        text: 'HTTPS_PROXY=http://run:cvk_gateway-key@10.96.0.30:8300',
      });
      return succeeded;
    });
    expect(JSON.stringify(events)).toContain('HTTPS_PROXY=http://run:');
    expect(JSON.stringify(events)).not.toContain('cvk_gateway-key');
  });

  it('refuses the run when no sandbox can be had, without driving it', async () => {
    const { backend } = fakeBackend(new SandboxUnavailable('no cgroups'));
    const { ctx, events } = fakeContext();
    const drive = jest.fn(async () => succeeded);
    expect(await new RunWorkspaces(backend, settings).within(ctx, environment, undefined, drive)).toEqual({
      state: 'ERROR',
      message: 'The run could not be isolated, so it was not started: no cgroups',
      errorCode: 'resource_unavailable',
    });
    expect(drive).not.toHaveBeenCalled();
    expect(events.at(-1)).toMatchObject({ step: 'workspace', status: 'failed' });
  });

  it('fails the run when the workspace cannot be laid out, and still releases the sandbox', async () => {
    const { sandbox, destroyed } = fakeSandbox({ exitCode: () => 1 });
    const { backend } = fakeBackend(sandbox);
    const { ctx } = fakeContext();
    const drive = jest.fn(async () => succeeded);
    const completion = await new RunWorkspaces(backend, settings).within(ctx, environment, undefined, drive);
    expect(completion).toMatchObject({ state: 'FAILED', errorCode: 'environment_setup_failed' });
    expect(drive).not.toHaveBeenCalled();
    expect(destroyed).toEqual([{ keepWorkspace: false }]);
  });

  it('keeps a failed setup’s workspace for the debug window, then discards it', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const { sandbox, destroyed } = fakeSandbox();
    const { backend, discarded } = fakeBackend(sandbox);
    const { ctx, events } = fakeContext();
    const failed: Completion = { state: 'FAILED', message: 'setup', setupFailed: true };
    await new RunWorkspaces(backend, settings).within(ctx, environment, undefined, async () => failed);
    expect(destroyed).toEqual([{ keepWorkspace: true }]);
    expect(released(events)).toEqual([
      { kind: 'workspace_released', disk_bytes: 4096, kept_for_debug: true },
    ]);
    expect(discarded).toEqual([]);
    jest.advanceTimersByTime(settings.debugRetentionMs);
    expect(discarded).toEqual(['run-1']);
  });

  it('does not keep the workspace of a debug session, nor discard one a debug execution is using', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const { sandbox, destroyed } = fakeSandbox();
    const { backend, discarded } = fakeBackend(sandbox);
    const workspaces = new RunWorkspaces(backend, settings);
    const failed: Completion = { state: 'FAILED', message: 'setup', setupFailed: true };
    await workspaces.within(fakeContext().ctx, environment, undefined, async () => failed);
    // The debug execution of the same run starts within the window and is still running when it closes.
    let finishDebug!: () => void;
    const debug = workspaces.within(
      fakeContext({ debug_session: true }).ctx,
      environment,
      undefined,
      () => new Promise<Completion>((resolve) => (finishDebug = () => resolve(failed))),
    );
    await jest.advanceTimersByTimeAsync(settings.debugRetentionMs);
    expect(discarded).toEqual([]);
    finishDebug();
    await debug;
    expect(destroyed).toEqual([{ keepWorkspace: true }, { keepWorkspace: false }]);
  });

  it('lets a limit that ended the sandbox decide the outcome, keeping the transcript, but not a cancellation', async () => {
    const { sandbox } = fakeSandbox({ usage: { diskBytes: 1, limit: 'memory' } });
    const { backend } = fakeBackend(sandbox);
    const workspaces = new RunWorkspaces(backend, settings);
    const transcript = Buffer.from('t');
    const ended = await workspaces.within(fakeContext().ctx, environment, undefined, async () => ({
      ...succeeded,
      transcript,
    }));
    expect(ended).toEqual({
      state: 'FAILED',
      message: 'The run exceeded its memory limit (1024 MiB) and was stopped',
      errorCode: 'budget_exceeded',
      transcript,
    });
    const cancelled: Completion = { state: 'CANCELLED', message: 'Cancelled' };
    expect(await workspaces.within(fakeContext().ctx, environment, undefined, async () => cancelled)).toBe(
      cancelled,
    );
  });

  it('ends the run ERROR naming why its sandbox went (a deleted Pod), on the timeline too, whatever the agent said', async () => {
    const lost = "The run's Pod was deleted while the run was in progress";
    const { sandbox } = fakeSandbox({ usage: { diskBytes: 1, lost } });
    const { backend } = fakeBackend(sandbox);
    const { ctx, events } = fakeContext();
    const ended = await new RunWorkspaces(backend, settings).within(
      ctx,
      environment,
      undefined,
      async () => ({
        state: 'FAILED',
        message: 'Agent exited with code 137',
      }),
    );
    expect(ended).toEqual({ state: 'ERROR', message: lost, errorCode: 'resource_unavailable' });
    expect(events).toContainEqual({ kind: 'log', level: 'error', text: lost });
  });

  it('releases the sandbox when driving throws', async () => {
    const { sandbox, destroyed } = fakeSandbox();
    const { backend } = fakeBackend(sandbox);
    const drive = async (): Promise<Completion> => {
      throw new Error('harness crashed');
    };
    await expect(
      new RunWorkspaces(backend, settings).within(fakeContext().ctx, environment, undefined, drive),
    ).rejects.toThrow('harness crashed');
    expect(destroyed).toEqual([{ keepWorkspace: false }]);
  });
});
