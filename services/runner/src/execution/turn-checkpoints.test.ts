import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { RunSandbox, SandboxExecOptions } from '../sandbox/run-sandbox';
import { TurnCheckpointer, TurnCheckpoints } from './turn-checkpoints';

/**
 * A sandbox whose copy prints `archive` and exits `code` (or each of `codes` in turn); what `tar -x` reads is kept
 * in `restored`.
 */
function sandboxPrinting(archive: string, code = 0, codes: number[] = []) {
  const calls: SandboxExecOptions[] = [];
  const restored: Buffer[] = [];
  const sandbox = {
    workspaceDir: '/workspace',
    exec(options: SandboxExecOptions) {
      calls.push(options);
      const stdin = new PassThrough();
      stdin.on('data', (d: Buffer) => restored.push(d));
      const ended = new Promise((resolve) => stdin.on('end', resolve));
      const extracting = options.argv.includes('-xf');
      return {
        stdin,
        stdout: extracting ? Readable.from([]) : Readable.from([Buffer.from(archive)]),
        stderr: Readable.from([]),
        exited: (extracting ? ended : Promise.resolve()).then(() => ({
          code: codes.shift() ?? code,
          signal: null,
        })),
        kill: async () => undefined,
      };
    },
  } as unknown as RunSandbox;
  return { sandbox, calls, restored };
}

describe('TurnCheckpoints', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'checkpoints-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("keeps the workspace copied from inside the sandbox, readable by the runner's account alone", async () => {
    const checkpoint = new TurnCheckpoints(path.join(dir, 'root')).of('run-1');
    const { sandbox, calls } = sandboxPrinting('tar bytes');
    await checkpoint.take(sandbox, { PATH: '/usr/bin' }, 2);

    expect(calls[0]).toMatchObject({ argv: ['tar', '-C', '/workspace', '-cf', '-', '.'], network: false });
    expect(await checkpoint.latest()).toMatchObject({ version: 1, turn: 2, resumptions: 0, bytes: 9 });
    const runDir = path.join(dir, 'root', 'run-1');
    expect(await readFile(path.join(runDir, 'workspace.tar'), 'utf8')).toBe('tar bytes');
    // The copy holds the run's HOME (its session, its files): no other account on the host reads it.
    expect((await stat(runDir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(runDir, 'workspace.tar'))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(runDir, 'checkpoint.json'))).mode & 0o777).toBe(0o600);
  });

  it('keeps the previous turn when a copy fails, and restores it into a new sandbox from inside', async () => {
    const checkpoint = new TurnCheckpoints(dir).of('run-1');
    await checkpoint.take(sandboxPrinting('turn 1').sandbox, {}, 1);
    await expect(checkpoint.take(sandboxPrinting('half', 2).sandbox, {}, 2)).rejects.toThrow('exited with 2');
    expect(await checkpoint.latest()).toMatchObject({ turn: 1 });

    const fresh = sandboxPrinting('');
    await checkpoint.restore(fresh.sandbox, {});
    expect(fresh.calls[0]).toMatchObject({
      argv: ['tar', '-C', '/workspace', '--no-same-owner', '-xf', '-'],
    });
    expect(Buffer.concat(fresh.restored).toString()).toBe('turn 1');
  });

  it("copies a turn only once the agent's session holds it, asking again until it does", async () => {
    const checkpoint = new TurnCheckpoints(dir).of('run-1');
    // The CLI reports the step before its session file has it: the copy says "not yet" (3) twice.
    const { sandbox, calls } = sandboxPrinting('with the session', 0, [3, 3]);
    const checkpointer = new TurnCheckpointer(
      checkpoint,
      () => ({ sandbox, env: {} }),
      0,
      () => undefined,
    );
    checkpointer.turn({ sessionGlob: '/workspace/.home/s/*.jsonl', holds: 'toolu_1' });
    await checkpointer.settled();
    expect(calls).toHaveLength(3);
    expect(calls[0]!.argv.slice(4)).toEqual(['/workspace/.home/s/*.jsonl', 'toolu_1', '/workspace']);
    expect(await checkpoint.latest()).toMatchObject({ turn: 1 });
  });

  it('copies one turn at a time, and a turn that ends during a copy once it is done (the latest wins)', async () => {
    const checkpoint = new TurnCheckpoints(dir).of('run-1');
    const { sandbox, calls } = sandboxPrinting('bytes');
    const checkpointer = new TurnCheckpointer(
      checkpoint,
      () => ({ sandbox, env: {} }),
      4,
      () => undefined,
    );
    checkpointer.turn();
    checkpointer.turn();
    checkpointer.turn();
    await checkpointer.settled();
    expect(calls).toHaveLength(2);
    expect(await checkpoint.latest()).toMatchObject({ turn: 7 });
  });
});
