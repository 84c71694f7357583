import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '@conveyor/logger';
import { descendantsOf, signalAll } from './process-tree';
import {
  SandboxUnavailable,
  type RunSandbox,
  type SandboxBackend,
  type SandboxExecOptions,
  type SandboxExit,
  type SandboxPolicy,
  type SandboxProcess,
} from './run-sandbox';
import { NONE_ACKNOWLEDGEMENT } from './sandbox-config';

const DEFAULT_KILL_GRACE_MS = 3000;

/** Signals a whole process group; the group is gone when this throws ESRCH. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * `RUN_SANDBOX=none`: no isolation at all, for development on a machine that cannot run a sandbox. Processes still
 * get only the environment the caller builds and run in their own process group so cancel ends the whole tree.
 * Every run logs a warning: this backend must never be what a real installation runs.
 */
export class UnsandboxedBackend implements SandboxBackend {
  readonly name = 'none';

  constructor(
    private readonly logger: Logger,
    /** Parent directory of the runs' workspaces, plain directories of the runner user here. */
    private readonly workspaceRoot: string,
    /** RUN_SANDBOX_NONE_ACKNOWLEDGED was set: without it the runner refuses to start (check). */
    private readonly acknowledged: boolean,
  ) {}

  discardWorkspace(runId: string): Promise<void> {
    return rm(path.join(this.workspaceRoot, runId), { recursive: true, force: true });
  }

  async check(): Promise<void> {
    if (!this.acknowledged)
      throw new SandboxUnavailable(
        `RUN_SANDBOX=none runs agents WITHOUT isolation; the runner starts with it only when RUN_SANDBOX_NONE_ACKNOWLEDGED=${NONE_ACKNOWLEDGEMENT} is set too (development only, docs/sandbox.md)`,
      );
    this.logger.warn(
      'RUN_SANDBOX=none: runs execute WITHOUT isolation, with the runner user and network; development only',
    );
  }

  async prepare(policy: SandboxPolicy): Promise<RunSandbox> {
    this.logger.warn({ runId: policy.runId }, 'running a run without a sandbox (RUN_SANDBOX=none)');
    const workspaceDir = path.join(this.workspaceRoot, policy.runId);
    await mkdir(workspaceDir, { recursive: true });
    const processes = new Set<SandboxProcess>();
    const endpoints = new Map(
      policy.endpoints.map((e) => [e.name, `http://${e.target.host}:${e.target.port}`]),
    );
    return {
      workspaceDir,
      endpointUrl(name) {
        const url = endpoints.get(name);
        if (!url) throw new Error(`no sandbox endpoint named ${name}`);
        return url;
      },
      exec(options: SandboxExecOptions) {
        const proc = startProcess(policy, workspaceDir, options);
        processes.add(proc);
        void proc.exited.finally(() => processes.delete(proc));
        return proc;
      },
      destroy: async (options = {}) => {
        await Promise.all([...processes].map((p) => p.kill(0)));
        if (!options.keepWorkspace) await this.discardWorkspace(policy.runId);
        return { diskBytes: 0 };
      },
    };
  }
}

function startProcess(
  policy: SandboxPolicy,
  workspaceDir: string,
  options: SandboxExecOptions,
): SandboxProcess {
  const [command, ...args] = options.argv;
  const child = spawn(command, args, {
    cwd: options.cwd ?? workspaceDir,
    env: options.env,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (pid) signalGroup(pid, 'SIGKILL');
  }, policy.limits.wallClockMs);
  timer.unref();
  const exited: Promise<SandboxExit> = new Promise((resolve) => {
    child.on('error', () => resolve({ code: 127, signal: null }));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // The leader is gone; take any descendants it left in its group with it.
      if (pid) signalGroup(pid, 'SIGKILL');
      resolve({ code, signal, ...(timedOut ? { limit: 'timeout' as const } : {}) });
    });
  });
  return {
    stdin: child.stdin,
    stdout: child.stdout!,
    stderr: child.stderr!,
    exited,
    async kill(graceMs = DEFAULT_KILL_GRACE_MS) {
      if (!pid || child.exitCode !== null || child.signalCode !== null) return;
      // Descendants that left the group (their own session) are taken too: found before the leader dies.
      const tree = descendantsOf(pid);
      signalGroup(pid, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      signalAll(tree, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const forced = setTimeout(() => {
        signalGroup(pid, 'SIGKILL');
        signalAll(tree, 'SIGKILL');
      }, graceMs);
      await Promise.race([exited, once(child, 'close')]);
      clearTimeout(forced);
      // The leader is gone: what it left behind outside its group goes now.
      signalAll(tree, 'SIGKILL');
    },
  };
}
