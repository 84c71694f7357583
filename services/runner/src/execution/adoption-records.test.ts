import { createReadStream } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { EventReporter, type NumberedEvents } from '../event-reporter';
import { outputLines } from '../harness/cli/output-lines';
import { FollowupInbox } from '../harness/followup-inbox';
import type { OrchestratorLink } from '../orchestrator-link';
import { adoptedAssignment, settledReporter } from '../test-support/execution-fakes';
import { ADOPTION_RECORD_VERSION, AdoptionRecords } from './adoption-records';
import { RecordFiles } from './record-files';

const assignment = adoptedAssignment();
const agent = { processIndex: 0, offsets: { stdout: 10, stderr: 0 } };

describe('AdoptionRecords', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'adopt-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const leave = async (record: Record<string, unknown>) => {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'run-1.json'), JSON.stringify(record));
  };

  it('writes its format version with each record', async () => {
    const records = new AdoptionRecords(new RecordFiles(dir));
    const reporter = settledReporter();
    const execution = records.execution('runner-a', assignment, reporter, new FollowupInbox());
    const proc = { stdout: new PassThrough(), offsets: agent.offsets } as never;
    execution.started({ processIndex: 0, proc, handled: agent.offsets });
    await execution.close(true);
    const written = JSON.parse(await readFile(path.join(dir, 'run-1.json'), 'utf8')) as { version: number };
    expect(written.version).toBe(ADOPTION_RECORD_VERSION);
  });

  it('keeps the follow-ups handed to the harness, so the next process drops their offers and acknowledges them', async () => {
    const records = new AdoptionRecords(new RecordFiles(dir));
    const reporter = settledReporter();
    const inbox = new FollowupInbox();
    const execution = records.execution('runner-a', assignment, reporter, inbox);
    const proc = { stdout: new PassThrough(), offsets: agent.offsets } as never;
    execution.started({ processIndex: 0, proc, handled: agent.offsets });
    inbox.push({ followup_id: 'f-1', message: 'one' });
    inbox.drain();
    inbox.push({ followup_id: 'f-2', message: 'queued only' });
    await execution.close(true);
    // Acknowledged once written down; the one only queued is neither kept nor acknowledged.
    expect(inbox.acknowledged()).toEqual(['f-1']);
    const { records: left } = await records.list();
    expect(left[0]!.followups).toEqual([{ followup_id: 'f-1', message: 'one' }]);
    const next = new FollowupInbox(left[0]!.followups);
    next.push({ followup_id: 'f-1', message: 'one' });
    next.push({ followup_id: 'f-2', message: 'queued only' });
    expect(next.drain()).toEqual(['queued only']);
  });

  it('takes back a record an older runner wrote before records carried a version', async () => {
    await leave({ runnerId: 'runner-a', assignment, agent });
    const { records, refused } = await new AdoptionRecords(new RecordFiles(dir)).list();
    expect(refused).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ version: 1, runnerId: 'runner-a', agent })]);
  });

  it('refuses a record of a newer version, naming it, so that its run ends ERROR rather than being misread', async () => {
    await leave({ version: ADOPTION_RECORD_VERSION + 1, runnerId: 'runner-a', assignment, agent, more: {} });
    const { records, refused } = await new AdoptionRecords(new RecordFiles(dir)).list();
    expect(records).toEqual([]);
    expect(refused).toEqual([
      {
        target: { run_id: 'run-1', execution: 2, runner_id: 'runner-a' },
        reason: `its adoption record has format version ${ADOPTION_RECORD_VERSION + 1}, newer than this runner's ${ADOPTION_RECORD_VERSION} (a newer runner left it)`,
      },
    ]);
  });

  /**
   * The orchestrator's side of ReportEvents as report-events.ts records it: a numbered batch adds only its events
   * past the count already recorded. `hold(call)`: that call is recorded but never answered (its runner is killed).
   */
  function orchestrator(hold: (call: number) => boolean) {
    const recorded: string[] = [];
    let calls = 0;
    let held: () => void = () => undefined;
    const heldCall = new Promise<void>((resolve) => (held = resolve));
    const link = (): OrchestratorLink =>
      ({
        call: (_method: string, request: NumberedEvents) => {
          const texts = request.events_json.map((e) => (JSON.parse(e) as { text: string }).text);
          const skip = request.first_event === 0 ? 0 : recorded.length - (request.first_event - 1);
          recorded.push(...texts.slice(Math.max(0, skip)));
          if (!hold(++calls)) return Promise.resolve({ cancel_requested: false, followups: [] });
          held();
          return new Promise(() => undefined);
        },
      }) as unknown as OrchestratorLink;
    return { recorded, link, heldCall };
  }

  it('a runner killed while a batch waits for its answer leaves every event to its next process, each recorded once', async () => {
    const output = path.join(dir, 'stdout');
    await writeFile(output, 'one\ntwo\n');
    const records = new AdoptionRecords(new RecordFiles(path.join(dir, 'adopt')));
    const target = { runId: assignment.run_id, execution: assignment.execution, runnerId: 'runner-a' };
    const quiet = () => undefined;
    // Reads the agent's output from `from` and turns each line into an event, as the CLI harness does.
    const follow = (reporter: EventReporter, handled: { stdout: number; stderr: number }) =>
      outputLines(createReadStream(output, { start: handled.stdout }), (line, bytes) => {
        reporter.emit({ kind: 'agent_message', text: line });
        handled.stdout += bytes;
      });

    // The first runner process: its second batch is recorded, but the runner is killed before the answer comes.
    const { recorded, link, heldCall } = orchestrator((call) => call === 2);
    const first = new EventReporter(link(), target, quiet, quiet, 60_000);
    const handled = { stdout: 0, stderr: 0 };
    // What it has read of the output: all of it.
    const proc = {
      get offsets() {
        return { stdout: handled.stdout, stderr: 0 };
      },
    } as never;
    records
      .execution('runner-a', assignment, first, new FollowupInbox())
      .started({ processIndex: 0, proc, handled });
    await follow(first, handled);
    await first.flush();
    await appendFile(output, 'three\n');
    await follow(first, handled);
    void first.flush();
    await heldCall;
    // Read and turned into an event while the batch before it waits: only in the killed process's memory.
    await appendFile(output, 'four\n');
    await follow(first, handled);
    expect(handled.stdout).toBe((await stat(output)).size);

    // The next runner process takes the execution back from the record the first one left.
    const { records: left } = await records.list();
    expect(left).toHaveLength(1);
    const kept = left[0]!;
    const next = new EventReporter(link(), target, quiet, quiet, 60_000, kept.events ?? 'unnumbered');
    await follow(next, { ...kept.agent.offsets });
    await next.flush();
    expect(recorded).toEqual(['one', 'two', 'three', 'four']);
  });
});
