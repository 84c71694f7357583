import { PassThrough } from 'node:stream';
import { FollowupInbox } from '../harness/followup-inbox';
import type { OrchestratorLink } from '../orchestrator-link';
import { adoptedAssignment, settledReporter } from '../test-support/execution-fakes';
import { AdoptionRecords } from './adoption-records';
import { LeaseRecords } from './lease-records';

const assignment = adoptedAssignment();
const offsets = { stdout: 10, stderr: 0 };
const reporter = settledReporter();

/** The orchestrator's RunnerService as the lease RPCs answer: what was called, and the records it hands out. */
function leaseService(adoptable: string[] = []) {
  const calls: Array<{ method: string; request: Record<string, unknown> }> = [];
  const link = {
    call: (method: string, request: Record<string, unknown>) => {
      calls.push({ method, request });
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
    const execution = start(new AdoptionRecords(new LeaseRecords(link, 'runner-a')), 'model-token');
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
    await start(new AdoptionRecords(new LeaseRecords(link, 'runner-a'))).close(false);
    expect(calls.map((c) => c.method)).toEqual(['SaveRunLease']);
  });

  it('takes an adopted execution back as the adopter, not as the previous holder the orchestrator refuses', async () => {
    const { calls: written, link: writer } = leaseService();
    await start(new AdoptionRecords(new LeaseRecords(writer, 'runner-a'))).close(true);
    const record = (written[1]!.request as { record_json: string }).record_json;

    const { calls, link } = leaseService([record, '{"cut short']);
    const { records, refused } = await new AdoptionRecords(new LeaseRecords(link, 'runner-b')).list();
    expect(calls[0]).toEqual({ method: 'AdoptRuns', request: { runner_id: 'runner-b', limit: 5 } });
    expect(refused).toEqual([]);
    expect(records).toEqual([
      expect.objectContaining({ runnerId: 'runner-b', agent: { processIndex: 0, offsets } }),
    ]);
  });
});
