import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import type { RunEvent } from '@conveyor/run-events';
import { resumptionAfterLoss } from './agent-resumption';
import { CHECKPOINT_VERSION, TurnCheckpoints } from './turn-checkpoints';

const CAUSE = "the agent's sandbox was killed";

describe('resumptionAfterLoss', () => {
  let dir: string;
  let events: RunEvent[];
  const ctx = () => ({
    reporter: { emit: (e: RunEvent) => void events.push(e) } as never,
    log: createLogger({ service: 'test', level: 'silent' }),
  });
  const checkpoint = () => new TurnCheckpoints(dir).of('run-1');
  const recorded = (fields: Record<string, unknown>) =>
    mkdir(path.join(dir, 'run-1'), { recursive: true }).then(() =>
      writeFile(
        path.join(dir, 'run-1', 'checkpoint.json'),
        JSON.stringify({
          version: CHECKPOINT_VERSION,
          turn: 3,
          resumptions: 0,
          bytes: 10,
          takenAt: 1,
          ...fields,
        }),
      ),
    );

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'checkpoints-'));
    events = [];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('goes on from the last turn, counts the resumption and says so on the timeline', async () => {
    await recorded({});
    const decided = await resumptionAfterLoss(ctx(), checkpoint(), CAUSE, 2);
    expect(decided).toEqual({ resume: expect.objectContaining({ turn: 3, resumptions: 1 }) });
    expect(events).toEqual([
      {
        kind: 'agent_lost',
        cause: CAUSE,
        turn: 3,
        resumption: 1,
        resumed: true,
        text: `Resumed after ${CAUSE} at turn 3`,
      },
    ]);
    const stored = JSON.parse(await readFile(path.join(dir, 'run-1', 'checkpoint.json'), 'utf8')) as {
      resumptions: number;
    };
    expect(stored.resumptions).toBe(1);
  });

  it('ends the run ERROR naming why when no turn was checkpointed: it is never started again from scratch', async () => {
    const decided = await resumptionAfterLoss(ctx(), checkpoint(), CAUSE, 2);
    expect(decided).toEqual({
      completion: expect.objectContaining({ state: 'ERROR', errorCode: 'resource_unavailable' }),
    });
    expect('completion' in decided && decided.completion.message).toMatch(/no checkpoint to go on from/);
    expect(events).toEqual([expect.objectContaining({ kind: 'agent_lost', resumed: false, turn: 0 })]);
  });

  it('stops at RUN_MAX_RESUMPTIONS and says so on the timeline', async () => {
    await recorded({ resumptions: 2 });
    const decided = await resumptionAfterLoss(ctx(), checkpoint(), CAUSE, 2);
    expect('completion' in decided && decided.completion.message).toMatch(
      /already resumed 2 time\(s\), the most RUN_MAX_RESUMPTIONS allows/,
    );
    expect(events).toEqual([expect.objectContaining({ kind: 'agent_lost', resumed: false, resumption: 3 })]);
  });

  it('refuses a checkpoint of a newer format, naming its version, and does not resume', async () => {
    await recorded({ version: CHECKPOINT_VERSION + 1 });
    const decided = await resumptionAfterLoss(ctx(), checkpoint(), CAUSE, 2);
    expect('completion' in decided && decided.completion.message).toMatch(
      `format version ${CHECKPOINT_VERSION + 1}, newer than this runner's ${CHECKPOINT_VERSION}`,
    );
    expect(events).toEqual([]);
  });
});
