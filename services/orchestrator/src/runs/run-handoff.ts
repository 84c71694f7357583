import type { BlobStore } from '@conveyor/blob-store';
import { newUuid, type PrismaClient, type RunState } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import type { BlobLinkSigner } from '../blobs/blob-links';
import { findRunForCaller, runOfRunKey } from './run-access';
import { isTerminal } from './run-state-machine';

/** Fits the gateway's default 10 MiB JSON body once base64-encoded. */
export const MAX_HANDOFF_BYTES = 7 * 1024 * 1024;
export const MAX_HANDOFF_FILES_PER_EXECUTION = 20;

export interface RunHandoffDeps {
  db: PrismaClient;
  blobs: BlobStore;
  sign: BlobLinkSigner;
  ttlSeconds: number;
}

/** The execution whose snapshot a handoff continues from: the current one once the run ended, else the one before. */
export function latestEndedExecution(run: { state: RunState; execution: number }): number {
  return isTerminal(run.state) ? run.execution : run.execution - 1;
}

/** Keeps the last path component, so a name can never address another key. */
function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop()?.trim() ?? '';
  if (!base || base === '.' || base === '..' || base.length > 255)
    throw new AppError('invalid_request', 'filename must be a file name of 1-255 characters');
  return base;
}

/** One snapshot file of an execution; `download_url` is a signed link when listed, empty on upload. */
export interface HandoffAttachment {
  attachment_id: string;
  filename: string;
  mime_type: string;
  download_url: string;
  execution: number;
  /** A decimal string: the wire's int64. */
  size_bytes: string;
}

/**
 * `POST /harness-support/handoff-attachments`: the harness of a run stores one snapshot file for its current
 * execution, to its own run only (runOfRunKey).
 */
export async function uploadHandoffAttachment(
  deps: RunHandoffDeps,
  caller: Caller,
  req: { filename: string; mime_type: string; data: Buffer },
): Promise<HandoffAttachment> {
  const run = await runOfRunKey(deps.db, caller);
  const filename = cleanFileName(req.filename);
  const data = Buffer.from(req.data);
  if (data.length === 0) throw new AppError('invalid_request', 'content_base64 must not be empty');
  if (data.length > MAX_HANDOFF_BYTES)
    throw new AppError('payload_too_large', `a handoff attachment is at most ${MAX_HANDOFF_BYTES} bytes`);
  const existing = await deps.db.runHandoffAttachment.count({
    where: { runId: run.id, execution: run.execution },
  });
  if (existing >= MAX_HANDOFF_FILES_PER_EXECUTION) {
    throw new AppError(
      'invalid_request',
      `an execution keeps at most ${MAX_HANDOFF_FILES_PER_EXECUTION} handoff attachments`,
    );
  }
  const id = newUuid();
  const blobKey = `handoff/${run.id}/${run.execution}/${id}`;
  const mimeType = req.mime_type || null;
  await deps.blobs.put(blobKey, data, mimeType ?? 'application/octet-stream');
  try {
    await deps.db.runHandoffAttachment.create({
      data: {
        id,
        runId: run.id,
        execution: run.execution,
        fileName: filename,
        mimeType,
        sizeBytes: data.length,
        blobKey,
      },
    });
  } catch (err) {
    await deps.blobs.delete(blobKey);
    throw err;
  }
  return {
    attachment_id: id,
    filename,
    mime_type: mimeType ?? '',
    download_url: '',
    execution: run.execution,
    size_bytes: String(data.length),
  };
}

/** Snapshot files of the run's latest ended execution, each with a fresh signed link; empty when there are none. */
export async function listHandoffAttachments(
  deps: RunHandoffDeps,
  caller: Caller,
  runId: string,
): Promise<{ attachments: HandoffAttachment[] }> {
  const run = await findRunForCaller(deps.db, caller, runId);
  const execution = latestEndedExecution(run);
  if (execution < 1) return { attachments: [] };
  const rows = await deps.db.runHandoffAttachment.findMany({
    where: { runId: run.id, execution },
    orderBy: { createdAt: 'asc' },
  });
  const expiresAt = new Date(Date.now() + deps.ttlSeconds * 1000);
  return {
    attachments: await Promise.all(
      rows.map(async (row) => ({
        attachment_id: row.id,
        filename: row.fileName,
        mime_type: row.mimeType ?? '',
        download_url: await deps.sign(row.blobKey, expiresAt),
        execution: row.execution,
        size_bytes: String(row.sizeBytes),
      })),
    ),
  };
}
