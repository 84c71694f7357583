import { AppError } from '@conveyor/errors';
import { EventReporter, type NumberedEvents } from './event-reporter';
import type { OrchestratorLink } from './orchestrator-link';

/** A link whose ReportEvents answers with what the test queued: an error to throw, or a control answer. */
function scriptedLink(answers: Array<Error | 'ok'>) {
  const sent: number[] = [];
  const attempts: Array<{ first_event: number; events_json: string[] }> = [];
  const link = {
    call: async (_method: string, request: { events_json: string[]; first_event: number }) => {
      attempts.push({ first_event: request.first_event, events_json: request.events_json });
      const answer = answers.shift() ?? 'ok';
      if (answer !== 'ok') throw answer;
      sent.push(request.events_json.length);
      return { cancel_requested: false, followups: [] };
    },
  } as unknown as OrchestratorLink;
  return { link, sent, attempts };
}

/** A reporter on `link` that ignores control answers and errors and flushes only when told. */
const quietReporter = (link: OrchestratorLink, from?: NumberedEvents | 'unnumbered') =>
  new EventReporter(
    link,
    { runId: 'r', execution: 1, runnerId: 'x' },
    () => undefined,
    () => undefined,
    60_000,
    from,
  );

const text = (attempt: { events_json: string[] }) =>
  attempt.events_json.map((e) => (JSON.parse(e) as { text: string }).text);

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

  it('numbers every batch from the execution’s first event, sending an unacknowledged one again from the same place', async () => {
    const { link, attempts } = scriptedLink([
      'ok',
      // No answer: the orchestrator may have recorded the batch or not; sent again, it records it once.
      new AppError('resource_unavailable', 'The platform is temporarily unavailable; retry'),
      'ok',
    ]);
    const reporter = quietReporter(link);
    const say = (t: string) => reporter.emit({ kind: 'agent_message', text: t });
    say('a');
    say('b');
    await reporter.flush();
    say('c');
    await reporter.flush();
    say('d');
    await reporter.flush();
    say('e');
    expect(await reporter.takeRest()).toMatchObject({ first_event: 5 });
    expect(attempts.map((a) => [a.first_event, text(a)])).toEqual([
      [1, ['a', 'b']],
      [3, ['c']],
      [3, ['c', 'd']],
    ]);
  });

  it('sends an execution taken back from an older runner’s record unnumbered, so none falls on a position its previous process used', async () => {
    const { link, attempts } = scriptedLink(['ok']);
    const reporter = quietReporter(link, 'unnumbered');
    reporter.emit({ kind: 'agent_message', text: 'a' });
    await reporter.flush();
    reporter.emit({ kind: 'agent_message', text: 'b' });
    expect(await reporter.takeRest()).toMatchObject({ first_event: 0 });
    expect(attempts.map((a) => a.first_event)).toEqual([0]);
  });

  it('goes on from what a previous process kept: its unacknowledged events sent again at their positions, the new ones after them', async () => {
    const { link, attempts } = scriptedLink(['ok']);
    const kept = { events_json: [JSON.stringify({ kind: 'agent_message', text: 'c' })], first_event: 3 };
    const reporter = quietReporter(link, kept);
    reporter.emit({ kind: 'agent_message', text: 'd' });
    await reporter.flush();
    expect(attempts.map((a) => [a.first_event, text(a)])).toEqual([[3, ['c', 'd']]]);
  });

  it('has the journal write down every event of a batch before the batch is sent', async () => {
    const { link, attempts } = scriptedLink(['ok', 'ok']);
    const reporter = quietReporter(link);
    const journaled: Array<{ first_event: number; texts: string[]; sentBefore: number }> = [];
    reporter.writeAheadTo(async () => {
      const kept = reporter.unacknowledged();
      journaled.push({ first_event: kept.first_event, texts: text(kept), sentBefore: attempts.length });
    });
    reporter.emit({ kind: 'agent_message', text: 'a' });
    await reporter.flush();
    reporter.emit({ kind: 'agent_message', text: 'b' });
    await reporter.flush();
    expect(journaled).toEqual([
      { first_event: 1, texts: ['a'], sentBefore: 0 },
      { first_event: 2, texts: ['b'], sentBefore: 1 },
    ]);
  });
});
