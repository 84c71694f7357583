import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RunDetached } from '../run-sandbox';
import { durableFiles } from './durable-files';
import { DurableProcess, type DurableAction } from './durable-process';

const RUN_ID = '00000000-0000-4000-8000-000000000001';

/** Everything `stream` gives, and a wait until it holds `text`. */
function collect(stream: NodeJS.ReadableStream) {
  let seen = '';
  const waiting: Array<{ text: string; resolve: (seen: string) => void }> = [];
  stream.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
    for (const w of waiting.filter((w) => seen.includes(w.text))) w.resolve(seen);
  });
  return {
    until: (text: string) =>
      new Promise<string>((resolve) =>
        seen.includes(text) ? resolve(seen) : waiting.push({ text, resolve }),
      ),
  };
}

describe('a durable process read from its files (as the keeper writes them)', () => {
  let root: string;
  let files: ReturnType<typeof durableFiles>;
  const actions: DurableAction[] = [];
  const start = (from = { stdout: 0, stderr: 0 }) =>
    new DurableProcess(files, from, Promise.resolve(), async (action) => actions.push(action), {
      stdin: false,
      pollMs: 5,
      reason: async () => undefined,
    });

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'durable-process-'));
    files = durableFiles(root, RUN_ID);
    await mkdir(files.dir, { recursive: true });
    actions.length = 0;
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('reads on from an offset in whole lines, the offset at the end of the last line given, and ends with the exit status', async () => {
    await writeFile(files.stdout, 'read before\nsecond line\npart');
    const proc = start({ stdout: 'read before\n'.length, stderr: 0 });
    const stdout = collect(proc.stdout);
    expect(await stdout.until('second line\n')).toBe('second line\n');
    // A line without its newline is not given yet: a next reader would start in the middle of it.
    expect(proc.offsets).toEqual({ stdout: 'read before\nsecond line\n'.length, stderr: 0 });

    await appendFile(files.stdout, 'ial line\nlast, no newline');
    await appendFile(files.stderr, 'warning\n');
    await writeFile(files.exit, '3\n');
    const [exit, rest] = await Promise.all([proc.exited, stdout.until('no newline')]);
    expect(rest).toBe('second line\npartial line\nlast, no newline');
    expect(exit).toEqual({ code: 3, signal: null });
    expect(proc.offsets.stderr).toBe('warning\n'.length);
  });

  it('stops reading when the runner leaves it to its next process: `exited` rejects with RunDetached, nothing is signalled', async () => {
    const proc = start();
    proc.detach();
    await expect(proc.exited).rejects.toBeInstanceOf(RunDetached);
    expect(actions).toEqual([]);
  });

  it('kill without a helper to signal through gives up waiting rather than hanging', async () => {
    const proc = new DurableProcess(
      files,
      { stdout: 0, stderr: 0 },
      Promise.resolve(),
      () => Promise.reject(new Error('the privileged sandbox helper exited')),
      { stdin: false, pollMs: 5, reason: async () => undefined },
    );
    await proc.kill(0);
    expect(await proc.exited).toEqual({ code: null, signal: null });
  });
});
