import { PassThrough } from 'node:stream';
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { AppError, fromGrpcError } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import { EventReporter } from '../event-reporter';
import { FollowupInbox } from '../harness/followup-inbox';
import type { OrchestratorLink } from '../orchestrator-link';
import { adoptedAssignment, settledReporter } from '../test-support/execution-fakes';
import { AdoptionRecords } from './adoption-records';
import { LeaseRecords } from './lease-records';

const assignment = adoptedAssignment();
const offsets = { stdout: 10, stderr: 0 };
const log = createLogger({ service: 'runner-test', level: 'silent' });
const bounds = { saveWithinMs: 60_000, releaseWithinMs: 60_000 };
const target = { run_id: 'run-1', execution: 2, runner_id: 'runner-a' };
/** No answer from the orchestrator (down or restarting), as the runner's link receives it. */
const unavailable = () =>
  fromGrpcError(
    Object.assign(new Error('14 UNAVAILABLE'), {
      code: GrpcStatus.UNAVAILABLE,
      details: 'connect ECONNREFUSED',
      metadata: new Metadata(),
    }),
  );
const reporter = settledReporter();

/** The orchestrator's RunnerService as the lease RPCs answer: what was called, and the records it hands out. */
function leaseService(adoptable: string[] = [], failures: Record<string, unknown[]> = {}) {
  const calls: Array<{ method: string; request: Record<string, unknown> }> = [];
  const link = {
    call: (method: string, request: Record<string, unknown>) => {
      calls.push({ method, request });
      const failure = failures[method]?.shift();
      if (failure) return Promise.reject(failure);
      if (method === 'ReportEvents') return Promise.resolve({ cancel_requested: false, followups: [] });
      if (method === 'AdoptRuns')
        return Promise.resolve({
          runs: adoptable.map((record_json) => ({
            run_id: 'run-1',
            execution: 2,
            previous_runner_id: 'runner-a',
            record_json,
          })),
        });
      return Promise.resolve({});
    },
  } as unknown as OrchestratorLink;
  return { calls, link };
}

const start = (records: AdoptionRecords, modelToken?: string) => {
  const execution = records.execution('runner-a', assignment, reporter, new FollowupInbox());
  const proc = { stdout: new PassThrough(), offsets } as never;
  execution.started({ processIndex: 0, proc, handled: offsets }, modelToken);
  return execution;
};

describe('LeaseRecords', () => {
  it("writes the started agent's record into the run's lease, and hands it over only when the runner stops", async () => {
    const { calls, link } = leaseService();
    const execution = start(
      new AdoptionRecords(new LeaseRecords(link, 'runner-a', bounds, log)),
      'model-token',
    );
    await execution.close(true);
    expect(calls.map((c) => c.method)).toEqual(['SaveRunLease', 'SaveRunLease', 'ReleaseRunLease']);
    const saved = calls[1]!.request as {
      run_id: string;
      execution: number;
      runner_id: string;
      record_json: string;
    };
    expect(saved).toMatchObject({ run_id: 'run-1', execution: 2, runner_id: 'runner-a' });
    expect(JSON.parse(saved.record_json)).toMatchObject({ agent: { offsets }, modelToken: 'model-token' });
    expect(calls[2]!.request).toEqual({ run_id: 'run-1', execution: 2, runner_id: 'runner-a' });
  });

  it('releases nothing when the execution ended here', async () => {
    const { calls, link } = leaseService();
    await start(new AdoptionRecords(new LeaseRecords(link, 'runner-a', bounds, log))).close(false);
    expect(calls.map((c) => c.method)).toEqual(['SaveRunLease']);
  });

  it('takes an adopted execution back as the adopter, not as the previous holder the orchestrator refuses', async () => {
    const { calls: written, link: writer } = leaseService();
    await start(new AdoptionRecords(new LeaseRecords(writer, 'runner-a', bounds, log))).close(true);
    const record = (written[1]!.request as { record_json: string }).record_json;

    const { calls, link } = leaseService([record, '{"cut short']);
    const { records, refused } = await new AdoptionRecords(
      new LeaseRecords(link, 'runner-b', bounds, log),
    ).list();
    expect(calls[0]).toEqual({ method: 'AdoptRuns', request: { runner_id: 'runner-b', limit: 5 } });
    expect(refused).toEqual([]);
    expect(records).toEqual([
      expect.objectContaining({ runnerId: 'runner-b', agent: { processIndex: 0, offsets } }),
    ]);
  });

  it('sends a save and a release again until the orchestrator, down for a while, acknowledges them', async () => {
    const { calls, link } = leaseService([], {
      SaveRunLease: [unavailable(), unavailable()],
      ReleaseRunLease: [unavailable(), unavailable()],
    });
    const leases = new LeaseRecords(link, 'runner-a', bounds, log);
    await leases.write(target, '{"version":1}');
    await leases.handOver(target);
    expect(calls.map((c) => c.method)).toEqual([
      ...Array<string>(3).fill('SaveRunLease'),
      ...Array<string>(3).fill('ReleaseRunLease'),
    ]);
    expect(calls[2]!.request).toEqual({ ...target, record_json: '{"version":1}' });
  });

  it('gives up on a save at once when the run was taken over (conflict), and once its bound is spent', async () => {
    const taken = new AppError('conflict', 'This runner no longer holds the run');
    const refused = leaseService([], { SaveRunLease: [taken] });
    await expect(new LeaseRecords(refused.link, 'runner-a', bounds, log).write(target, '{}')).rejects.toBe(
      taken,
    );
    expect(refused.calls).toHaveLength(1);

    const down = leaseService([], { SaveRunLease: [unavailable(), unavailable()] });
    const noWait = { saveWithinMs: 0, releaseWithinMs: 0 };
    await expect(
      new LeaseRecords(down.link, 'runner-a', noWait, log).write(target, '{}'),
    ).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    expect(down.calls).toHaveLength(1);
  });

  it('sends no event batch past a lease save that was not acknowledged, and sends it once one is', async () => {
    const { calls, link } = leaseService([], {
      SaveRunLease: [new AppError('internal_error', 'x'), new AppError('internal_error', 'x')],
    });
    const events = new EventReporter(
      link,
      { runId: 'run-1', execution: 2, runnerId: 'runner-a' },
      () => undefined,
      () => undefined,
      60_000,
    );
    const records = new AdoptionRecords(new LeaseRecords(link, 'runner-a', bounds, log));
    const execution = records.execution('runner-a', assignment, events, new FollowupInbox());
    execution.started({
      processIndex: 0,
      proc: { stdout: new PassThrough(), offsets } as never,
      handled: offsets,
    });
    events.emit({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' } as never);
    await events.flush();
    expect(calls.map((c) => c.method)).toEqual(['SaveRunLease', 'SaveRunLease']);
    await events.close();
    expect(calls.map((c) => c.method)).toEqual([
      'SaveRunLease',
      'SaveRunLease',
      'SaveRunLease',
      'ReportEvents',
    ]);
  });
});
