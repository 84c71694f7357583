import { createWriteStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { PassThrough, type Writable } from 'node:stream';
import {
  RunDetached,
  type OutputOffsets,
  type SandboxExit,
  type SandboxLimitHit,
  type SandboxProcess,
} from '../run-sandbox';
import { LOST_EXIT, type durableFiles } from './durable-files';

type Files = ReturnType<typeof durableFiles>;
export type DurableAction = 'end-input' | 'SIGTERM' | 'SIGKILL';

/**
 * One output file read on from an offset into a stream, whole lines at a time, so that the offset it has reached
 * is always where a later reader starts a line. Hand-written (a file read from a position in a loop): the tail
 * packages on npm follow by watching and do not take a byte offset to start from.
 */
class OutputFile {
  private carry = Buffer.alloc(0);

  constructor(
    private readonly path: string,
    public offset: number,
    readonly stream: PassThrough,
  ) {}

  /** Reads what was appended; `last`: the writer is gone, so a line without its newline is pushed too. */
  async read(last = false): Promise<void> {
    const file = await open(this.path, 'r').catch(() => undefined);
    if (file) {
      try {
        const chunk = Buffer.alloc(64 * 1024);
        for (;;) {
          const { bytesRead } = await file.read(chunk, 0, chunk.length, this.offset + this.carry.length);
          if (bytesRead === 0) break;
          this.carry = Buffer.concat([this.carry, chunk.subarray(0, bytesRead)]);
        }
      } finally {
        await file.close();
      }
    }
    const end = last ? this.carry.length : this.carry.lastIndexOf(0x0a) + 1;
    if (end === 0) return;
    this.stream.write(this.carry.subarray(0, end));
    this.offset += end;
    this.carry = this.carry.subarray(end);
  }
}

/**
 * The run's agent process on the local backend, started by the helper under a keeper (privileged/durable-commands.ts)
 * with its stdio on files: output read from the files, input written to the FIFO, the end taken from the exit status
 * the keeper records — nothing of it is tied to this runner process, which may stop (`detach`) and leave it to the
 * next one (`BwrapSandbox.attachDurable`, reading on from the recorded offsets).
 */
export class DurableProcess implements SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly exited: Promise<SandboxExit>;
  private readonly outputs: [OutputFile, OutputFile];
  private detached: (() => void) | undefined;
  private abandoned: (() => void) | undefined;
  private done = false;

  constructor(
    private readonly files: Files,
    from: OutputOffsets,
    /** Settles once the process runs (rejects when it could not start). */
    started: Promise<void>,
    private readonly control: (action: DurableAction) => Promise<unknown>,
    options: { stdin: boolean; pollMs: number; reason: () => Promise<SandboxLimitHit | undefined> },
  ) {
    this.outputs = [
      new OutputFile(files.stdout, from.stdout, this.stdout),
      new OutputFile(files.stderr, from.stderr, this.stderr),
    ];
    const input = options.stdin ? new PassThrough() : undefined;
    this.stdin = input ?? null;
    if (input)
      void started.then(
        () => this.feed(input),
        () => undefined,
      );
    const ended = new Promise<SandboxExit>((resolve, reject) => {
      this.detached = () => reject(new RunDetached());
      this.abandoned = () => resolve({ code: null, signal: null });
      void started.then(
        () => this.follow(options.pollMs, resolve),
        (err: Error) => resolve(this.startFailed(err)),
      );
    });
    this.exited = ended.then(async (exit) => {
      this.done = true;
      const limit = await options.reason();
      return { ...exit, ...(limit ? { limit } : {}) };
    });
  }

  get offsets(): OutputOffsets {
    return { stdout: this.outputs[0].offset, stderr: this.outputs[1].offset };
  }

  /** Stops reading: the process goes on without this runner process; `exited` rejects with `RunDetached`. */
  detach(): void {
    this.done = true;
    this.detached?.();
  }

  async kill(graceMs = 2000): Promise<void> {
    if (this.done)
      return this.exited.then(
        () => undefined,
        () => undefined,
      );
    if (graceMs > 0) {
      await this.control('SIGTERM').catch(() => undefined);
      const timer = new Promise((r) => setTimeout(r, graceMs).unref());
      await Promise.race([this.exited.catch(() => undefined), timer]);
    }
    // Without the helper nothing here can end it: stop waiting (the next runner process's helper ends it).
    if (!this.done) await this.control('SIGKILL').catch(() => this.abandon());
    await this.exited.catch(() => undefined);
  }

  private abandon(): void {
    this.done = true;
    for (const output of this.outputs) output.stream.end();
    this.abandoned?.();
  }

  /** Writes the input to the FIFO; its end closes ours and has the keeper close its own, so the process sees EOF. */
  private feed(input: PassThrough): void {
    // Read-write: opening a FIFO so never waits for a reader (a write-only open would block a thread of the pool
    // for good when the keeper is gone, and with it this process's exit).
    const fifo = createWriteStream(this.files.input, { flags: 'r+' });
    fifo.on('error', () => undefined);
    fifo.once('close', () => {
      if (input.readableEnded) void this.control('end-input').catch(() => undefined);
    });
    input.pipe(fifo);
  }

  private follow(pollMs: number, resolve: (exit: SandboxExit) => void): void {
    const next = () => setTimeout(() => void tick().catch(next), pollMs);
    const tick = async () => {
      if (this.done) return;
      const status = await readFile(this.files.exit, 'utf8').catch(() => undefined);
      for (const output of this.outputs) await output.read(status !== undefined);
      if (this.done) return;
      if (status === undefined) return void next();
      for (const output of this.outputs) output.stream.end();
      const [word, signal] = status.trim().split(' ');
      if (word === LOST_EXIT) {
        const lost = `the agent's sandbox was killed (its keeper ended by ${signal ?? 'a signal'})`;
        return resolve({ code: null, signal: null, lost });
      }
      const code = Number(word);
      // The keeper's shell reports a signal's end as 128 + its number.
      resolve({ code: Number.isInteger(code) ? code : null, signal: null });
    };
    void tick().catch(next);
  }

  private startFailed(err: Error): SandboxExit {
    this.stderr.end(`sandbox: ${err.message}\n`);
    this.stdout.end();
    return { code: 125, signal: null };
  }
}
