import { AppError } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import { SandboxUnavailable } from '../sandbox/run-sandbox';
import { fakeAssignment } from '../test-support/execution-fakes';
import { claimExecution, ExecutionLifecycle, type LifecycleLink } from './run-lifecycle';

const log = createLogger({ service: 'runner-test', level: 'silent' });
const job = { runId: 'run-1', execution: 1 };
const settings = { runnerId: 'runner-1', heartbeatIntervalMs: 60_000, limits: { wallClockMs: 60_000 } };

/** An orchestrator that answers each method as `answers` says (control answers by default) and records the calls. */
function fakeLink(answers: Record<string, (request: Record<string, unknown>) => unknown> = {}) {
  const calls: Array<{ method: string; request: Record<string, unknown> }> = [];
  const link = {
    call: async (method: string, request: Record<string, unknown>) => {
      calls.push({ method, request });
      const answer = answers[method];
      return answer ? answer(request) : { cancel_requested: false, followups: [] };
    },
  } as unknown as LifecycleLink;
  const completed = () => calls.find((c) => c.method === 'CompleteRun')?.request;
  return { link, calls, completed };
}

describe('claimExecution', () => {
  it('claims the job for this runner, saying it acknowledges follow-ups', async () => {
    const { link, calls } = fakeLink({ ClaimRun: () => fakeAssignment() });
    expect(await claimExecution(link, job, 'runner-1', log)).toMatchObject({ run_id: 'run-1' });
    expect(calls).toEqual([
      {
        method: 'ClaimRun',
        request: { run_id: 'run-1', execution: 1, runner_id: 'runner-1', acknowledges_followups: true },
      },
    ]);
  });

  it('skips a run that is not claimable, and takes an assignment already claimed without asking', async () => {
    const refused = fakeLink({
      ClaimRun: () => {
        throw new AppError('conflict', 'already claimed');
      },
    });
    expect(await claimExecution(refused.link, job, 'runner-1', log)).toBeUndefined();
    const given = fakeLink();
    expect(await claimExecution(given.link, job, 'runner-1', log, fakeAssignment())).toMatchObject({
      run_id: 'run-1',
    });
    expect(given.calls).toEqual([]);
  });

  it('lets any other failure of the claim through', async () => {
    const { link } = fakeLink({
      ClaimRun: () => {
        throw new AppError('internal_error', 'boom');
      },
    });
    await expect(claimExecution(link, job, 'runner-1', log)).rejects.toThrow('boom');
  });
});

describe('ExecutionLifecycle', () => {
  it('reports the completion with the events as transcript when the harness kept none, and logs its trace', async () => {
    const { link, completed } = fakeLink();
    const lifecycle = new ExecutionLifecycle(
      link,
      fakeAssignment(),
      settings,
      log,
      new AbortController().signal,
    );
    lifecycle.context.reporter.emit({ kind: 'log', level: 'info', text: 'hello' });
    expect(await lifecycle.finish({ state: 'SUCCEEDED', message: 'done' })).toBe('succeeded');
    const request = completed()!;
    expect(request).toMatchObject({
      run_id: 'run-1',
      execution: 1,
      runner_id: 'runner-1',
      state: 'SUCCEEDED',
      message: 'done',
      error_code: '',
      setup_failed: false,
    });
    expect(String(request.transcript)).toContain('"text":"hello"');
    expect(lifecycle.context.trace.phases()).toEqual(
      expect.objectContaining({ claimed: expect.any(Number), completed: expect.any(Number) }),
    );
  });

  it('sends the last batch with the completion when the orchestrator takes it there, else as a batch of its own', async () => {
    for (const takes of [true, false]) {
      const { link, calls, completed } = fakeLink();
      const lifecycle = new ExecutionLifecycle(
        link,
        fakeAssignment({ completion_takes_events: takes }),
        settings,
        log,
        new AbortController().signal,
      );
      lifecycle.context.reporter.emit({ kind: 'agent_message', text: 'last' });
      await lifecycle.finish({ state: 'SUCCEEDED', message: 'done' });
      const last = JSON.stringify({ kind: 'agent_message', text: 'last' });
      expect(calls.map((c) => c.method)).toEqual(takes ? ['CompleteRun'] : ['ReportEvents', 'CompleteRun']);
      expect(completed()!.events_json).toEqual(takes ? [last] : []);
    }
  });

  it('reports a halt’s outcome over what the harness said, keeping its transcript and session', async () => {
    const { link, completed } = fakeLink();
    const lifecycle = new ExecutionLifecycle(
      link,
      fakeAssignment(),
      settings,
      log,
      new AbortController().signal,
    );
    lifecycle.context.halt({ state: 'FAILED', message: 'over budget', errorCode: 'budget_exceeded' });
    expect(lifecycle.context.signal.aborted).toBe(true);
    const session = { path: 's.jsonl', content: Buffer.from('s') };
    await lifecycle.finish({
      state: 'CANCELLED',
      message: 'Cancelled',
      transcript: Buffer.from('t'),
      session,
    });
    expect(completed()).toMatchObject({
      state: 'FAILED',
      error_code: 'budget_exceeded',
      transcript: Buffer.from('t'),
      session,
    });
  });

  it('ends as CANCELLED when the orchestrator asks for it in an answer', async () => {
    const { link, completed } = fakeLink({ ReportEvents: () => ({ cancel_requested: true, followups: [] }) });
    const lifecycle = new ExecutionLifecycle(
      link,
      fakeAssignment(),
      settings,
      log,
      new AbortController().signal,
    );
    lifecycle.context.reporter.emit({ kind: 'log', level: 'info', text: 'working' });
    await lifecycle.context.reporter.flush();
    expect(lifecycle.context.signal.aborted).toBe(true);
    expect(await lifecycle.finish({ state: 'SUCCEEDED', message: 'done' })).toBe('cancelled');
    expect(completed()).toMatchObject({ state: 'CANCELLED', message: 'Cancelled' });
  });

  it('lets go of a leased execution another replica took over: told "no longer yours", it cancels nothing', async () => {
    const { link, calls } = fakeLink({
      ReportEvents: () => {
        throw new AppError('conflict', 'This runner no longer holds the run');
      },
    });
    const leased = new ExecutionLifecycle(
      link,
      fakeAssignment(),
      { ...settings, leased: true },
      log,
      new AbortController().signal,
    );
    leased.context.reporter.emit({ kind: 'log', level: 'info', text: 'working' });
    await leased.context.reporter.flush().catch(() => undefined);
    // The harness is not stopped (that would kill the adopter's agent in the shared Pod): the sandbox is let go.
    expect(leased.context.signal.aborted).toBe(false);
    expect(leased.context.takenOver?.aborted).toBe(true);
    expect(leased.takenOver).toBe(true);
    await leased.detach();
    expect(calls.map((c) => c.method)).not.toContain('CompleteRun');

    // Where runs do not move between replicas, the same answer stops the run as before.
    const local = new ExecutionLifecycle(link, fakeAssignment(), settings, log, new AbortController().signal);
    local.context.reporter.emit({ kind: 'log', level: 'info', text: 'working' });
    await local.context.reporter.flush().catch(() => undefined);
    expect(local.context.signal.aborted).toBe(true);
    expect(local.context.takenOver).toBeUndefined();
    await local.detach();
  });

  it('ends as ERROR with the stop’s cause when the runner stops under it', async () => {
    const { link, completed } = fakeLink();
    const stop = new AbortController();
    const lifecycle = new ExecutionLifecycle(link, fakeAssignment(), settings, log, stop.signal);
    stop.abort(new SandboxUnavailable('the privileged helper is gone'));
    expect(lifecycle.context.signal.aborted).toBe(true);
    await lifecycle.finish({ state: 'SUCCEEDED', message: 'done' });
    expect(completed()).toMatchObject({
      state: 'ERROR',
      message: 'the privileged helper is gone',
      error_code: 'resource_unavailable',
    });
  });

  it('skips a heartbeat when an event batch was answered within the interval (it did the same work)', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const { link, calls } = fakeLink();
      const heartbeats = () => calls.filter((c) => c.method === 'Heartbeat').length;
      const lifecycle = new ExecutionLifecycle(
        link,
        fakeAssignment(),
        { ...settings, heartbeatIntervalMs: 1000 },
        log,
        new AbortController().signal,
      );
      await jest.advanceTimersByTimeAsync(500);
      lifecycle.context.reporter.emit({ kind: 'log', level: 'info', text: 'working' });
      await lifecycle.context.reporter.flush();
      await jest.advanceTimersByTimeAsync(500);
      expect(heartbeats()).toBe(0);
      await jest.advanceTimersByTimeAsync(1000);
      expect(heartbeats()).toBe(1);
      await lifecycle.finish({ state: 'SUCCEEDED', message: 'done' });
    } finally {
      jest.useRealTimers();
    }
  });

  it('still finishes when the orchestrator refuses the completion, sending it once', async () => {
    const { link, calls } = fakeLink({
      CompleteRun: () => {
        throw new AppError('internal_error', 'An unexpected error occurred');
      },
    });
    const lifecycle = new ExecutionLifecycle(
      link,
      fakeAssignment(),
      settings,
      log,
      new AbortController().signal,
    );
    expect(await lifecycle.finish({ state: 'FAILED', message: 'no' })).toBe('failed');
    expect(calls.filter((c) => c.method === 'CompleteRun')).toHaveLength(1);
  });

  it('sends the same completion until the orchestrator takes it, heartbeating meanwhile, then stops both', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      let refusals = 4;
      const { link, calls } = fakeLink({
        CompleteRun: () => {
          if (refusals-- > 0)
            throw new AppError('resource_unavailable', 'The database is temporarily unavailable');
          return { cancel_requested: false, followups: [] };
        },
      });
      const count = (method: string) => calls.filter((c) => c.method === method).length;
      const lifecycle = new ExecutionLifecycle(
        link,
        fakeAssignment({ completion_takes_events: true }),
        { ...settings, heartbeatIntervalMs: 1000 },
        log,
        new AbortController().signal,
      );
      lifecycle.context.reporter.emit({ kind: 'agent_message', text: 'last' });
      let outcome: string | undefined;
      const finished = lifecycle.finish({ state: 'SUCCEEDED', message: 'done' }).then((o) => (outcome = o));
      // 250 ms doubled per failure, half of each random: four retries take under 0.25 + 0.5 + 1 + 2 s.
      await jest.advanceTimersByTimeAsync(4000);
      await finished;
      expect(outcome).toBe('succeeded');
      const completions = calls.filter((c) => c.method === 'CompleteRun').map((c) => c.request);
      expect(completions).toHaveLength(5);
      // The same report each time: the same events from the same place, so the orchestrator records them once.
      for (const sent of completions) expect(sent).toEqual(completions[0]);
      expect(completions[0]).toMatchObject({
        first_event: 1,
        events_json: [JSON.stringify({ kind: 'agent_message', text: 'last' })],
        state: 'SUCCEEDED',
      });
      expect(count('Heartbeat')).toBeGreaterThanOrEqual(1);
      const heartbeats = count('Heartbeat');
      await jest.advanceTimersByTimeAsync(5000);
      expect([count('Heartbeat'), count('CompleteRun')]).toEqual([heartbeats, 5]);
    } finally {
      jest.useRealTimers();
    }
  });
});
