import { Socket } from 'node:net';
import {
  helperRequestSchema,
  helperSettingsSchema,
  type HelperMessage,
  type HelperRequest,
} from './helper-protocol';
import { PrivilegedRuns } from './privileged-runs';

// The privileged helper (docs/sandbox.md): forked by the runner while it is root, the only part of the runner that
// stays root. It takes requests over the fork IPC channel only, validates each, and dies with the runner.

const settings = helperSettingsSchema.parse(JSON.parse(process.argv[2] ?? '{}'));
// After the runner is gone (disconnect) there is no one to tell: what ends meanwhile is not reported.
const send = (message: HelperMessage) => (process.connected ? process.send?.(message) : undefined);
const runs = new PrivilegedRuns(settings, (exited, code, signal) => send({ exited, code, signal }));
/** Stdio sockets received for executions not started yet, by execution number and slot. */
const pendingStdio = new Map<number, Map<number, Socket>>();

async function handle(request: HelperRequest, socket: unknown): Promise<unknown> {
  switch (request.op) {
    case 'open':
      return runs.open(request);
    case 'stdio': {
      if (!(socket instanceof Socket)) throw new Error('a stdio message carries a socket');
      const slots = pendingStdio.get(request.execId) ?? new Map<number, Socket>();
      slots.set(request.slot, socket);
      pendingStdio.set(request.execId, slots);
      return null;
    }
    case 'adopt':
      return runs.adopt(request.runId);
    case 'releaseLeftovers':
      return runs.releaseLeftovers(request.adopting);
    case 'durable':
      runs.durableAction(request.runId, request.action);
      return null;
    case 'exec': {
      if (request.durable) return { pid: await runs.execDurable(request) };
      const stdio = pendingStdio.get(request.execId) ?? new Map<number, Socket>();
      pendingStdio.delete(request.execId);
      try {
        return { pid: runs.exec(request, stdio) };
      } catch (err) {
        for (const socket of stdio.values()) socket.destroy();
        throw err;
      }
    }
    case 'signal':
      await runs.signal(request.runId, request.execId, request.signal);
      return null;
    case 'status':
      return runs.status(request.runId);
    case 'release':
      return runs.release(request.runId, request.keep);
    case 'discard':
      await runs.discard(request.runId);
      return null;
    case 'capture':
      return runs.capture(request.runId, request.snapshot);
    case 'dropSnapshot':
      await runs.snapshots.drop(request.snapshot);
      return null;
    case 'snapshotStats':
      return runs.snapshots.stats();
  }
}

process.on('message', (message: { id?: unknown; request?: unknown }, socket: unknown) => {
  const id = typeof message?.id === 'number' ? message.id : -1;
  const parsed = helperRequestSchema.safeParse(message?.request);
  if (!parsed.success) {
    if (socket instanceof Socket) socket.destroy();
    send({ id, ok: false, error: `invalid request: ${parsed.error.issues[0]?.message ?? 'malformed'}` });
    return;
  }
  handle(parsed.data, socket).then(
    (value) => send({ id, ok: true, value }),
    (err: Error) => send({ id, ok: false, error: err.message }),
  );
});

// The runner is gone (exit, crash): release its runs, whose commands die with us anyway (bwrap --die-with-parent),
// except the durable ones (the agents), which the next runner process takes back.
process.on('disconnect', () => {
  void runs.releaseAll().finally(() => process.exit(0));
});

runs.init().then(
  () => send({ id: 0, ok: true, value: null }),
  (err: Error) => {
    send({ id: 0, ok: false, error: err.message });
    process.exit(1);
  },
);
