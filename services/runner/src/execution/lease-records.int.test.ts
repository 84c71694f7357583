import { createLogger } from '@conveyor/logger';
import { mutualTlsCredentials } from '@conveyor/proto';
import { apiCall, startPlatform, type RunningPlatform } from '@conveyor/testing';
import { OrchestratorLink } from '../orchestrator-link';
import { LeaseRecords } from './lease-records';

const log = createLogger({ service: 'runner-test', level: 'silent' });
const RECORD = JSON.stringify({ version: 1, runnerId: 'runner-a', agent: { processIndex: 0 } });

/** Polls `check` until it holds (the orchestrator's restart takes seconds on a loaded machine). */
async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// A run's lease written through the real orchestrator, which is killed while the save is in flight and started again:
// the save is sent until the orchestrator acknowledges it, never tried once (docs/sandbox.md "Run leases").
describe('run lease writes across an orchestrator restart (real orchestrator, PostgreSQL, mTLS)', () => {
  let platform: RunningPlatform;
  let link: OrchestratorLink;

  beforeAll(async () => {
    // The restart outlasts the platform's short lost-runner window: here nothing but the lease moves the run.
    platform = await startPlatform({ withRunner: false, env: { RUNNER_LOST_AFTER_MS: '600000' } });
    link = new OrchestratorLink(
      platform.orchestratorGrpcAddr,
      mutualTlsCredentials(platform.trust.serviceEnv('runner')),
    );
  }, 120_000);

  afterAll(async () => {
    link?.close();
    await platform?.stop();
  });

  it('saves the lease once the orchestrator is back, and another replica adopts exactly that record', async () => {
    const created = await apiCall(platform, 'POST', '/agent/runs', { prompt: 'a long tool step' });
    expect(created.status).toBe(200);
    const target = { run_id: created.body.run_id as string, execution: 1, runner_id: 'runner-a' };
    await link.call('ClaimRun', { ...target, acknowledges_followups: true });
    // Adoptable only once its sandbox is being prepared or its agent runs.
    const pending = { kind: 'state_changed', from: 'CLAIMED', to: 'PENDING' };
    await link.call('ReportEvents', { ...target, events_json: [JSON.stringify(pending)], first_event: 1 });

    const failures: unknown[] = [];
    const watched = {
      call: ((method, request) =>
        link.call(method, request).catch((err: unknown) => {
          failures.push(err);
          throw err;
        })) as OrchestratorLink['call'],
    };
    const leases = new LeaseRecords(
      watched,
      'runner-a',
      { saveWithinMs: 120_000, releaseWithinMs: 120_000 },
      log,
    );

    platform.kill('orchestrator', 'SIGKILL');
    const orchestrator = platform.process('orchestrator')!;
    await until(
      'the orchestrator exited',
      () => orchestrator.exitCode !== null || orchestrator.signalCode !== null,
    );
    const saved = leases.write(target, RECORD);
    await until('a save refused by the stopped orchestrator', () => failures.length > 0);
    expect(failures[0]).toMatchObject({ code: 'resource_unavailable' });
    await platform.restartOrchestrator();
    await saved;

    // Written: released, it is what another replica adopts.
    await leases.handOver(target);
    const { runs } = await link.call('AdoptRuns', { runner_id: 'runner-b', limit: 5 });
    expect(runs).toEqual([
      { run_id: target.run_id, execution: 1, previous_runner_id: 'runner-a', record_json: RECORD },
    ]);
  }, 180_000);
});
