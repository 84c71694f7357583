import { PassThrough, type Readable, type Writable } from 'node:stream';
import { RunDetached, type OutputOffsets, type SandboxExit, type SandboxProcess } from '../run-sandbox';
import type { ExecStatus } from './kubernetes-api';

/**
 * Where a run's durable agent keeps its stdio in the Pod: /tmp, the Pod's memory-backed emptyDir, out of the
 * workspace (whose changes become the run's patch). Of the run's uid, like the agent itself.
 */
export const POD_DURABLE_DIR = '/tmp/.conveyor-agent';

/**
 * The agent's launcher and reader in one shell script, so that starting the agent is one exec (time to agent).
 * `$1` the directory, `$2`/`$3` the stdout/stderr bytes already read; with a command after them it is launched first
 * (one agent process at a time: a CLI started again per follow-up replaces the files of the one before).
 *
 * The agent runs in a background subshell with its stdio on files, so it does not belong to the exec session (which
 * dies with the runner's connection): `out`/`err` its output, `exit` its status (renamed into place once complete),
 * `in` a FIFO for its input, held open for writing by a `sleep` (`holder`) so that a runner that goes is no EOF;
 * killing the holder is. The rest follows the files from the offsets until `exit` exists, then exits with its status:
 * `exit` is looked at before each read, so the read after it appeared has everything the agent wrote.
 * Sizes and `tail -c`/`head -c` rather than `tail -F`, which cannot say where it stopped.
 */
const DURABLE_SCRIPT = `d=$1 a=$2 b=$3; shift 3
if [ "$#" -gt 0 ]; then
  rm -rf "$d"; mkdir -m 700 "$d" && mkfifo "$d/in" && : >"$d/out" && : >"$d/err" || exit 125
  (
    sleep 2147483647 <>"$d/in" >/dev/null 2>&1 & echo $! >"$d/holder"
    "$@" <"$d/in" >"$d/out" 2>"$d/err"
    s=$?; kill "$(cat "$d/holder")" 2>/dev/null
    echo "$s" >"$d/exit.part" && mv "$d/exit.part" "$d/exit"
  ) </dev/null >/dev/null 2>&1 &
fi
exec 3<&0
cat <&3 >"$d/in" 2>/dev/null & c=$!
exec 3<&-
while :; do
  [ -e "$d/exit" ] && e=1
  n=$(($(wc -c <"$d/out"))); if [ "$n" -gt "$a" ]; then tail -c +$((a + 1)) "$d/out" | head -c $((n - a)); a=$n; fi
  n=$(($(wc -c <"$d/err"))); if [ "$n" -gt "$b" ]; then tail -c +$((b + 1)) "$d/err" | head -c $((n - b)) >&2; b=$n; fi
  if [ -n "$e" ]; then kill "$c" 2>/dev/null; exit "$(cat "$d/exit")"; fi
  sleep 0.2
done`;

/** The input's end reaches the agent once the holder's write end is closed too (the reader's `cat` closes its own). */
const END_INPUT_SCRIPT = 'kill "$(cat "$1/holder")" 2>/dev/null; true';

/** argv (run under `env -i` … `cd`, podExecCommand) that launches `agent` durable and follows it. */
export function durableLaunch(agent: string[], dir = POD_DURABLE_DIR): [string, ...string[]] {
  return ['/bin/sh', '-c', DURABLE_SCRIPT, 'conveyor-agent', dir, '0', '0', ...agent];
}

function followArgv(dir: string, from: OutputOffsets): [string, ...string[]] {
  return ['/bin/sh', '-c', DURABLE_SCRIPT, 'conveyor-agent', dir, String(from.stdout), String(from.stderr)];
}

/** Starts one exec in the run's Pod whose stdio goes to these streams. */
export type DurableExec = (
  argv: string[],
  io: { stdout: Writable; stderr: Writable; stdin: Readable | null },
  onStatus: (status: ExecStatus) => void,
) => Promise<{ close(): void }>;

/** Exit code of the exec's status, or undefined when the stream closed without one (the connection cut). */
function exitCode(status: ExecStatus): number | undefined {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
  return cause === undefined ? undefined : Number(cause);
}

/** Consecutive follows that may close without a status and without a byte read before the agent counts as lost. */
const MAX_SILENT_FOLLOWS = 3;

/** One output stream passed on in whole lines, so that its offset is always where a later reader starts a line. */
class Lines {
  private carry = Buffer.alloc(0);

  constructor(
    public offset: number,
    readonly stream: PassThrough,
    private readonly progressed: () => void,
  ) {}

  /** A writable for one exec's stream (an exec may end the stream it was given: each follow gets its own). */
  sink(): Writable {
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => this.push(chunk));
    return sink;
  }

  private push(chunk: Buffer): void {
    this.carry = Buffer.concat([this.carry, chunk]);
    const end = this.carry.lastIndexOf(0x0a) + 1;
    if (end === 0) return;
    this.stream.write(this.carry.subarray(0, end));
    this.offset += end;
    this.carry = this.carry.subarray(end);
    this.progressed();
  }

  /** The agent ended: its last line without a newline is passed on too. */
  flush(): void {
    if (this.carry.length > 0) this.stream.write(this.carry);
    this.offset += this.carry.length;
    this.carry = Buffer.alloc(0);
  }

  /** Read again from the offset: what a cut stream carried of an unfinished line comes again. */
  reset(): void {
    this.carry = Buffer.alloc(0);
  }
}

/**
 * The run's agent in its Pod, started detached from the exec session (DURABLE_SCRIPT) and read through an exec that
 * follows its files from byte offsets: a runner replica that goes leaves it running, and any replica reads on from
 * the recorded offsets (`KubernetesSandbox.attachDurable`). `detach()` stops reading and kills nothing.
 */
export class PodDurableProcess implements SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly exited: Promise<SandboxExit>;
  private readonly lines: [Lines, Lines];
  private socket: Promise<{ close(): void } | undefined> = Promise.resolve(undefined);
  private settle!: (exit: SandboxExit) => void;
  private fail!: (err: Error) => void;
  private done = false;
  private silent = 0;

  constructor(
    private readonly exec: DurableExec,
    options: {
      /** The exec's argv that launches the agent (durableLaunch, wrapped for its environment); absent, it is read on. */
      launch?: string[];
      from: OutputOffsets;
      stdin: boolean;
      dir?: string;
      /** Kills every process of the run in the Pod (the exec API has no per-process signal). */
      killAll: () => Promise<void>;
    },
  ) {
    this.dir = options.dir ?? POD_DURABLE_DIR;
    this.killAll = options.killAll;
    const progressed = () => (this.silent = 0);
    this.lines = [
      new Lines(options.from.stdout, this.stdout, progressed),
      new Lines(options.from.stderr, this.stderr, progressed),
    ];
    this.exited = new Promise<SandboxExit>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
    const input = options.stdin ? new PassThrough() : null;
    this.stdin = input;
    input?.once('end', () => {
      // Once the reader's own writer has ended (its stdin ended), only the holder keeps the agent's input open.
      let ended!: () => void;
      const status = new Promise<void>((resolve) => (ended = resolve));
      void this.exec(['/bin/sh', '-c', END_INPUT_SCRIPT, 'end-input', this.dir], sinks(), () => ended())
        .then(async (s) => {
          await status;
          s.close();
        })
        .catch(() => undefined);
    });
    this.follow(options.launch, input);
  }

  private readonly dir: string;
  private readonly killAll: () => Promise<void>;

  get offsets(): OutputOffsets {
    return { stdout: this.lines[0].offset, stderr: this.lines[1].offset };
  }

  private follow(launch: string[] | undefined, input: PassThrough | null): void {
    const [out, err] = this.lines;
    const argv = launch ?? followArgv(this.dir, this.offsets);
    this.socket = this.exec(argv, { stdout: out.sink(), stderr: err.sink(), stdin: input }, (status) => {
      if (this.done) return;
      const code = exitCode(status);
      if (code !== undefined) return this.end({ code, signal: null });
      // The stream closed without the exec's status: the agent is not the exec's, so read on from where we are.
      for (const l of this.lines) l.reset();
      if (++this.silent > MAX_SILENT_FOLLOWS) return this.end({ code: null, signal: null });
      this.follow(undefined, input);
    }).catch((e: unknown) => {
      if (!this.done) {
        this.stderr.write(`sandbox: exec failed: ${(e as Error).message}\n`);
        this.end({ code: null, signal: null });
      }
      return undefined;
    });
  }

  private end(exit: SandboxExit): void {
    this.done = true;
    for (const l of this.lines) {
      l.flush();
      l.stream.end();
    }
    this.settle(exit);
  }

  /** Stops reading: the agent goes on in its Pod for whichever replica takes the run; `exited` rejects with RunDetached. */
  detach(): void {
    if (this.done) return;
    this.done = true;
    void this.socket.then((s) => s?.close());
    this.fail(new RunDetached());
  }

  async kill(): Promise<void> {
    if (this.done)
      return this.exited.then(
        () => undefined,
        () => undefined,
      );
    await this.killAll().catch(() => undefined);
    this.done = true;
    void this.socket.then((s) => s?.close()).catch(() => undefined);
    for (const l of this.lines) l.stream.end();
    this.settle({ code: null, signal: 'SIGKILL' });
  }
}

function sinks() {
  const drain = () => new PassThrough().resume();
  return { stdout: drain(), stderr: drain(), stdin: null };
}
