import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RunDetached } from '../run-sandbox';
import type { ExecStatus } from './kubernetes-api';
import { durableLaunch, PodDurableProcess, type DurableExec } from './pod-durable';

// The durable agent's shell script run for real by /bin/sh on this host, standing in for the Pod's exec API: a
// "connection" is the spawned shell, cutting it kills that shell alone (as a runner's exec stream dies), never the
// agent it launched.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'pod-durable-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** An exec "API" over local shells; `cut()` ends every open stream without a status, like a lost connection. */
function localExec() {
  const open = new Set<() => void>();
  const exec: DurableExec = async (argv, io, onStatus) => {
    const [command, ...args] = argv as [string, ...string[]];
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.pipe(io.stdout);
    child.stderr.pipe(io.stderr);
    child.stdin.on('error', () => undefined);
    if (io.stdin) io.stdin.pipe(child.stdin);
    else child.stdin.end();
    let cut = false;
    const close = () => {
      cut = true;
      // A connection's end ends the exec's stdin too (what the shell's input `cat` reads).
      io.stdin?.unpipe(child.stdin);
      child.stdin.end();
      child.kill('SIGKILL');
    };
    open.add(close);
    child.on('close', (code) => {
      open.delete(close);
      const status: ExecStatus = cut
        ? { status: 'Closed' }
        : code === 0
          ? { status: 'Success' }
          : { status: 'Failure', details: { causes: [{ reason: 'ExitCode', message: String(code) }] } };
      onStatus(status);
    });
    return { close };
  };
  return { exec, cut: () => [...open].forEach((c) => c()) };
}

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return new Promise((resolve) => stream.on('end', () => resolve(text)));
}

const noKill = async () => undefined;

it('launches the agent in one exec and ends with its output and exit status', async () => {
  const { exec } = localExec();
  const dir = path.join(root, 'agent');
  const launch = durableLaunch(['/bin/sh', '-c', 'echo one; echo two >&2; printf last; exit 7'], dir);
  const proc = new PodDurableProcess(exec, {
    launch,
    from: { stdout: 0, stderr: 0 },
    stdin: false,
    dir,
    killAll: noKill,
  });
  const [out, err, exit] = await Promise.all([collect(proc.stdout), collect(proc.stderr), proc.exited]);
  expect(out).toBe('one\nlast');
  expect(err).toBe('two\n');
  expect(exit).toEqual({ code: 7, signal: null });
  expect(proc.offsets).toEqual({ stdout: 8, stderr: 4 });

  // The next agent process of the run (a CLI started per follow-up) starts on files of its own.
  const next = new PodDurableProcess(exec, {
    launch: durableLaunch(['/bin/sh', '-c', 'echo again'], dir),
    from: { stdout: 0, stderr: 0 },
    stdin: false,
    dir,
    killAll: noKill,
  });
  const [again, end] = await Promise.all([collect(next.stdout), next.exited]);
  expect(again).toBe('again\n');
  expect(end).toEqual({ code: 0, signal: null });
});

it('survives its exec connection: a later reader goes on from the offsets and gets each line once', async () => {
  const first = localExec();
  const dir = path.join(root, 'agent');
  // The agent waits for a follow-up on stdin, then answers it: it outlives the first reader's connection.
  const agent = ['/bin/sh', '-c', 'echo started; read line; echo "got $line"; exit 0'];
  const proc = new PodDurableProcess(first.exec, {
    launch: durableLaunch(agent, dir),
    from: { stdout: 0, stderr: 0 },
    stdin: true,
    dir,
    killAll: noKill,
  });
  const seen: string[] = [];
  proc.stdout.on('data', (d: Buffer) => seen.push(d.toString()));
  await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
  proc.detach();
  await expect(proc.exited).rejects.toBeInstanceOf(RunDetached);
  first.cut();
  const from = proc.offsets;
  expect(from).toEqual({ stdout: 'started\n'.length, stderr: 0 });

  const second = localExec();
  const adopted = new PodDurableProcess(second.exec, { from, stdin: true, dir, killAll: noKill });
  const rest = collect(adopted.stdout);
  adopted.stdin!.end('follow-up\n');
  expect(await adopted.exited).toEqual({ code: 0, signal: null });
  expect(await rest).toBe('got follow-up\n');
  expect(seen.join('')).toBe('started\n');
  expect(await readFile(path.join(dir, 'exit'), 'utf8')).toBe('0\n');
});

it('reads on by itself when its stream closes without a status, and ends stdin only when asked', async () => {
  const local = localExec();
  const dir = path.join(root, 'agent');
  const agent = ['/bin/sh', '-c', 'echo ready; cat; echo done'];
  const proc = new PodDurableProcess(local.exec, {
    launch: durableLaunch(agent, dir),
    from: { stdout: 0, stderr: 0 },
    stdin: true,
    dir,
    killAll: noKill,
  });
  const out = collect(proc.stdout);
  await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
  // The connection is cut: the agent's input is still open (no EOF), and a new follow takes the input on.
  local.cut();
  proc.stdin!.end('echoed\n');
  expect(await proc.exited).toEqual({ code: 0, signal: null });
  expect(await out).toBe('ready\nechoed\ndone\n');
});
