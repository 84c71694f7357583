import { AppError } from '@conveyor/errors';
import { EventReporter } from './event-reporter';
import type { OrchestratorLink } from './orchestrator-link';

/** A link whose ReportEvents answers with what the test queued: an error to throw, or a control answer. */
function scriptedLink(answers: Array<Error | 'ok'>) {
  const sent: number[] = [];
  const link = {
    call: async (_method: string, request: { events_json: string[] }) => {
      const answer = answers.shift() ?? 'ok';
      if (answer !== 'ok') throw answer;
      sent.push(request.events_json.length);
      return { cancel_requested: false, followups: [] };
    },
  } as unknown as OrchestratorLink;
  return { link, sent };
}

describe('EventReporter', () => {
  it('reports an unreachable orchestrator once per outage, keeps the events, and still reports every other failure', async () => {
    const unavailable = () =>
      new AppError('resource_unavailable', 'The platform is temporarily unavailable; retry');
    const conflict = new AppError('conflict', 'the run is no longer yours');
    const { link, sent } = scriptedLink([
      unavailable(),
      unavailable(),
      unavailable(),
      'ok',
      unavailable(),
      conflict,
    ]);
    const errors: unknown[] = [];
    const reporter = new EventReporter(
      link,
      { runId: 'r', execution: 1, runnerId: 'x' },
      () => undefined,
      (err) => errors.push(err),
      60_000,
    );
    const emitAndFlush = async () => {
      reporter.emit({ kind: 'log', level: 'info', text: 'hello' });
      await reporter.flush();
    };
    for (let i = 0; i < 4; i++) await emitAndFlush();
    // Three failed batches, one report; the fourth sent all four events.
    expect(errors).toHaveLength(1);
    expect(sent).toEqual([4]);
    await emitAndFlush();
    await emitAndFlush();
    expect(errors.map((e) => (e as AppError).code)).toEqual([
      'resource_unavailable',
      'resource_unavailable',
      'conflict',
    ]);
    await reporter.close();
  });
});
