import path from 'node:path';
import { writeSandboxFile } from './harness/cli/sandbox-files';
import { collectBytes } from './sandbox/collect-output';
import { workspaceDirs } from './sandbox/run-environment';
import type { RunSandbox } from './sandbox/run-sandbox';

/** Attachments land in `attachments/` under the workspace; names are reduced to a safe basename. */
export function safeFileName(name: string): string {
  const base = path.basename(name).replace(/[^A-Za-z0-9._-]/g, '_');
  return base && base !== '.' && base !== '..' ? base : 'attachment';
}

/**
 * Lays out the run's workspace (HOME, `attachments/`) from inside its sandbox, as the run's uid: a kept workspace is
 * the agent's, and any path in it may be a link it planted; inside, a link reaches only what the run could anyway.
 */
export async function layOutWorkspace(
  sandbox: RunSandbox,
  env: Record<string, string>,
  attachments: Array<{ file_name: string; data: Buffer }>,
): Promise<void> {
  const dir = sandbox.workspaceDir;
  const made = await collectBytes(
    sandbox.exec({
      argv: ['mkdir', '-p', '--', ...workspaceDirs(dir)],
      env,
      network: false,
    }),
  );
  if (made.code !== 0) throw new Error(`could not lay out the workspace: ${made.stderr.trim()}`);
  for (const attachment of attachments) {
    const file = path.posix.join(dir, 'attachments', safeFileName(attachment.file_name));
    await writeSandboxFile(sandbox, env, file, attachment.data);
  }
}
