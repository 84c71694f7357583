import { fork, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import type { HelperMessage, HelperRequest, HelperSettings, RunStatus } from './helper-protocol';
import type { SnapshotStats } from '../../snapshot-store';

type SnapshotRef = Extract<HelperRequest, { op: 'capture' }>['snapshot'];

/** The helper's entry: its own file beside this one in the build. */
export const HELPER_ENTRY = path.join(__dirname, 'helper-main.js');

type Exited = { code: number | null; signal: NodeJS.Signals | null };

/**
 * The runner's side of the privileged helper: requests over the fork IPC channel, one reply each, and the ends of
 * executions as they come. A lost helper is fatal to the runner (`onLost`): its runs cannot go on.
 */
export class PrivilegedHelper {
  private nextId = 1;
  private nextExec = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly exits = new Map<number, (exit: Exited) => void>();
  private lost: Error | undefined;

  private constructor(private readonly child: ChildProcess) {}

  /** Forks the helper (the caller must be root) and waits until it is ready. */
  static async start(
    settings: HelperSettings,
    onLost: (reason: string) => void,
    entry = HELPER_ENTRY,
  ): Promise<PrivilegedHelper> {
    const child = fork(entry, [JSON.stringify(settings)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const helper = new PrivilegedHelper(child);
    const ready = new Promise<unknown>((resolve, reject) => helper.pending.set(0, { resolve, reject }));
    child.on('message', (message: HelperMessage) => helper.receive(message));
    child.once('exit', (code, signal) => {
      helper.lost = new Error(`the privileged sandbox helper exited (${signal ?? code})`);
      for (const { reject } of helper.pending.values()) reject(helper.lost);
      helper.pending.clear();
      for (const exited of helper.exits.values()) exited({ code: null, signal: 'SIGKILL' });
      helper.exits.clear();
      onLost(helper.lost.message);
    });
    await ready;
    // The helper lives as long as this process and never keeps it alive on its own.
    child.unref();
    if (helper.pending.size === 0) child.channel?.unref();
    return helper;
  }

  private receive(message: HelperMessage): void {
    if ('exited' in message) {
      this.exits.get(message.exited)?.({ code: message.code, signal: message.signal });
      this.exits.delete(message.exited);
      return;
    }
    const waiter = this.pending.get(message.id);
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.child.channel?.unref();
    if (message.ok) waiter?.resolve(message.value);
    else waiter?.reject(new Error(message.error));
  }

  request(request: HelperRequest, socket?: net.Socket): Promise<unknown> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++;
    // A request waiting for its reply keeps this process alive; an idle helper does not.
    this.child.channel?.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, request }, socket, (err) => {
        if (err) {
          this.pending.delete(id);
          reject(err);
        }
      });
    });
  }

  open(runId: string, limits: Extract<HelperRequest, { op: 'open' }>['limits'], snapshot?: SnapshotRef) {
    return this.request({ op: 'open', runId, limits, ...(snapshot ? { snapshot } : {}) }) as Promise<{
      uid: number;
      cgroups: boolean;
      socketsDir: string;
      snapshot?: string;
      snapshotFailure?: string;
    }>;
  }

  capture(runId: string, snapshot: SnapshotRef): Promise<{ snapshot?: string }> {
    return this.request({ op: 'capture', runId, snapshot }) as Promise<{ snapshot?: string }>;
  }

  async dropSnapshot(snapshot: SnapshotRef): Promise<void> {
    await this.request({ op: 'dropSnapshot', snapshot });
  }

  snapshotStats(): Promise<SnapshotStats> {
    return this.request({ op: 'snapshotStats' }) as Promise<SnapshotStats>;
  }

  /**
   * Starts a command: its stdio are the far ends of socket pairs whose near ends the caller keeps, handed to the
   * helper as handles. Resolves once it runs, with when it ends.
   */
  async exec(
    request: Omit<Extract<HelperRequest, { op: 'exec' }>, 'op' | 'execId'>,
    stdio: Array<net.Socket | undefined>,
  ): Promise<{ execId: number; exited: Promise<Exited> }> {
    const execId = this.nextExec++;
    for (const [slot, socket] of stdio.entries()) {
      if (!socket) continue;
      await this.request({ op: 'stdio', execId, slot: slot as 0 | 1 | 2 }, socket);
      // The helper holds its own copy now; ours would keep the near end from ever seeing EOF.
      socket.destroy();
    }
    const exited = new Promise<Exited>((resolve) => this.exits.set(execId, resolve));
    try {
      await this.request({ op: 'exec', execId, ...request });
    } catch (err) {
      this.exits.delete(execId);
      throw err;
    }
    return { execId, exited };
  }

  /** Starts the run's durable command (its stdio on files, under a keeper that outlives the helper). */
  async execDurable(request: Omit<Extract<HelperRequest, { op: 'exec' }>, 'op' | 'execId' | 'durable'>) {
    await this.request({ op: 'exec', execId: this.nextExec++, durable: true, ...request });
  }

  /** Takes back a run whose durable command a previous runner process started. */
  adopt(runId: string) {
    return this.request({ op: 'adopt', runId }) as Promise<{
      uid: number;
      cgroups: boolean;
      socketsDir: string;
      /** When the run's sandbox was first opened (epoch ms). */
      openedAt: number;
    }>;
  }

  releaseLeftovers(adopting: string[]): Promise<string[]> {
    return this.request({ op: 'releaseLeftovers', adopting }) as Promise<string[]>;
  }

  durable(runId: string, action: Extract<HelperRequest, { op: 'durable' }>['action']): Promise<unknown> {
    return this.request({ op: 'durable', runId, action });
  }

  signal(runId: string, execId: number, signal: 'SIGTERM' | 'SIGKILL'): Promise<unknown> {
    return this.request({ op: 'signal', runId, execId, signal });
  }

  status(runId: string): Promise<RunStatus> {
    return this.request({ op: 'status', runId }) as Promise<RunStatus>;
  }

  release(runId: string, keep: boolean): Promise<{ diskBytes: number }> {
    return this.request({ op: 'release', runId, keep }) as Promise<{ diskBytes: number }>;
  }

  async discard(runId: string): Promise<void> {
    await this.request({ op: 'discard', runId });
  }

  /** Ends the helper (which releases what is still open). */
  stop(): void {
    this.child.disconnect();
  }
}
