import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HOME_DIR_NAME } from './sandbox/run-environment';

/** Attachments land in `attachments/` under the workspace; names are reduced to a safe basename. */
export function safeFileName(name: string): string {
  const base = path.basename(name).replace(/[^A-Za-z0-9._-]/g, '_');
  return base && base !== '.' && base !== '..' ? base : 'attachment';
}

/** One directory per run, kept across executions so continuations and debug sessions find the same files. */
export async function prepareWorkspace(
  root: string,
  runId: string,
  attachments: Array<{ file_name: string; data: Buffer }>,
): Promise<string> {
  const dir = path.join(root, runId);
  await mkdir(path.join(dir, 'attachments'), { recursive: true });
  await mkdir(path.join(dir, HOME_DIR_NAME), { recursive: true });
  for (const attachment of attachments) {
    await writeFile(path.join(dir, 'attachments', safeFileName(attachment.file_name)), attachment.data);
  }
  return dir;
}

export async function removeWorkspace(root: string, runId: string): Promise<void> {
  await rm(path.join(root, runId), { recursive: true, force: true });
}
