import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import { BwrapBackend, PrivilegedHelper } from '@conveyor/runner';

/**
 * The bubblewrap backend on a temporary root, with its privileged helper forked from this process (root, and stays
 * root: no runner account). The benches of the local sandbox share it.
 */
export async function startBwrapBackend(prefix: string) {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(root, 0o711);
  const settings = {
    workspaceRoot: path.join(root, 'workspaces'),
    stateDir: path.join(root, 'state'),
    readOnlyPaths: [],
    snapshots: { maxAgeMs: 3_600_000, maxBytes: 1 << 30 },
  };
  const helper = await PrivilegedHelper.start(
    {
      ...settings,
      bwrapPath: execFileSync('sh', ['-c', 'command -v bwrap']).toString().trim(),
      runnerUid: 0,
      runnerGid: 0,
    },
    () => undefined,
    require.resolve('@conveyor/runner/dist/sandbox/bwrap/privileged/helper-main.js'),
  );
  const backend = new BwrapBackend({
    ...settings,
    helper,
    internalHosts: [],
    monitorIntervalMs: 1000,
    logger: createLogger({ service: 'bench', level: 'warn' }),
  });
  await backend.check();
  return { root, helper, backend };
}
