import { AppError } from '@conveyor/errors';
import { createLogger } from '@conveyor/logger';
import { FollowupInbox } from './harness/followup-inbox';
import { RunControl } from './run-control';

const unavailable = () =>
  new AppError('resource_unavailable', 'The platform is temporarily unavailable; retry');
const answer = { cancel_requested: false, followups: [] };

function control() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(
    { service: 'test', level: 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const abort = new AbortController();
  return { run: new RunControl(logger, abort, new FollowupInbox()), lines, abort };
}

describe('RunControl', () => {
  it('logs an unreachable orchestrator once when the outage begins and once when it ends, not at every heartbeat', () => {
    const { run, lines, abort } = control();
    for (let beat = 0; beat < 30; beat++) run.failed(unavailable());
    run.answered(answer);
    run.answered(answer);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'dependency unavailable; backing off'],
      ['info', 'dependency available again; resumed'],
    ]);
    expect(lines[1]).toMatchObject({ dependency: 'orchestrator', failures: 30 });
    expect(abort.signal.aborted).toBe(false);
  });

  it('still logs every other failure, and stops the run when it is no longer ours', () => {
    const { run, lines, abort } = control();
    run.failed(new AppError('internal_error', 'An unexpected error occurred'));
    run.failed(new AppError('internal_error', 'An unexpected error occurred'));
    expect(lines.map((l) => l.msg)).toEqual([
      'orchestrator call failed; will retry',
      'orchestrator call failed; will retry',
    ]);
    run.failed(new AppError('conflict', 'the run is no longer yours'));
    expect(abort.signal.aborted).toBe(true);
  });
});
