import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { RunAssignment__Output } from '@conveyor/proto';
import { ADOPTION_RECORD_VERSION, AdoptionRecords } from './adoption-records';

const assignment = {
  run_id: 'run-1',
  execution: 2,
  attachments: [],
  session: null,
} as unknown as RunAssignment__Output;
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
    const records = new AdoptionRecords(dir);
    const execution = records.execution('runner-a', assignment);
    const proc = { stdout: new PassThrough(), offsets: agent.offsets } as never;
    execution.started({ processIndex: 0, proc });
    await execution.close(true);
    const written = JSON.parse(await readFile(path.join(dir, 'run-1.json'), 'utf8')) as { version: number };
    expect(written.version).toBe(ADOPTION_RECORD_VERSION);
  });

  it('takes back a record an older runner wrote before records carried a version', async () => {
    await leave({ runnerId: 'runner-a', assignment, agent });
    const { records, refused } = await new AdoptionRecords(dir).list();
    expect(refused).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ version: 1, runnerId: 'runner-a', agent })]);
  });

  it('refuses a record of a newer version, naming it, so that its run ends ERROR rather than being misread', async () => {
    await leave({ version: ADOPTION_RECORD_VERSION + 1, runnerId: 'runner-a', assignment, agent, more: {} });
    const { records, refused } = await new AdoptionRecords(dir).list();
    expect(records).toEqual([]);
    expect(refused).toEqual([
      {
        target: { run_id: 'run-1', execution: 2, runner_id: 'runner-a' },
        reason: `its adoption record has format version ${ADOPTION_RECORD_VERSION + 1}, newer than this runner's ${ADOPTION_RECORD_VERSION} (a newer runner left it)`,
      },
    ]);
  });
});
