import type { BlobStore } from '@conveyor/blob-store';
import { newUuid, type Prisma, type PrismaClient } from '@conveyor/db';
import { AppError } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import type { RunEvent } from '@conveyor/run-events';
import { artifactBlobKey, recordArtifact } from './record-artifact';
import {
  fileNameOf,
  MAX_ARTIFACT_BYTES,
  NEEDS_BYTES,
  parseReportedData,
  REPORTED_TYPES,
  type ReportedType,
} from './artifact-input';
import { runOfRunKey } from '../runs/run-access';
import { sharedPublicly } from '../runs/session-sharing';
import { embeddedView, type ArtifactView } from './artifact-views';

export const PLAN_CONTENT_TYPE = 'text/markdown; charset=utf-8';

function parseJsonObject(json: string): unknown {
  try {
    return JSON.parse(json || '{}');
  } catch {
    throw new AppError('invalid_request', 'data must be a JSON object');
  }
}

/** An artifact as a harness reports it; `content` only for the types that carry bytes (`has_content`). */
export interface ReportedArtifact {
  artifact_type: string;
  data_json: string;
  content: Buffer;
  has_content: boolean;
  is_public: boolean;
  /** A PLAN's UID to replace its content; empty for a new artifact. */
  artifact_uid: string;
}

/**
 * `POST /harness-support/report-artifact`: the harness of a run reports an artifact to its own run (runOfRunKey).
 * Bytes go to the blob store before the row is written (a failed write removes them again); a PLAN named by
 * artifact_uid gets its content replaced.
 */
export async function reportArtifact(
  deps: { db: PrismaClient; blobs: BlobStore },
  caller: Caller,
  req: ReportedArtifact,
): Promise<ArtifactView> {
  const run = await runOfRunKey(deps.db, caller);
  // The key is in the agent's hands: publishing is the run creator's decision, not the agent's (docs/artifacts.md).
  if (req.is_public && !sharedPublicly(run.config))
    throw new AppError(
      'not_authorized',
      'A run may publish an artifact (is_public) only when its creator shared the run publicly (config.session_sharing.public_access)',
    );
  if (!(REPORTED_TYPES as string[]).includes(req.artifact_type)) {
    throw new AppError('invalid_request', `artifact_type must be one of ${REPORTED_TYPES.join(', ')}`);
  }
  const type = req.artifact_type as ReportedType;
  const raw = parseJsonObject(req.data_json);
  const content = Buffer.from(req.content);
  if (NEEDS_BYTES.has(type)) {
    if (!req.has_content || content.length === 0)
      throw new AppError('invalid_request', `content_base64 is required for ${type} artifacts`);
    if (content.length > MAX_ARTIFACT_BYTES)
      throw new AppError('payload_too_large', `content must be at most ${MAX_ARTIFACT_BYTES} bytes`);
  } else if (req.has_content) {
    throw new AppError(
      'invalid_request',
      `${type} artifacts take no content_base64${type === 'PLAN' ? ' (the plan is data.content)' : ''}`,
    );
  }
  if (req.artifact_uid && type !== 'PLAN')
    throw new AppError('invalid_request', 'artifact_uid (update) applies to PLAN artifacts only');

  const now = new Date();
  const id = newUuid();
  let data: Record<string, unknown>;
  let bytes: { body: Buffer; contentType: string } | undefined;
  switch (type) {
    case 'FILE': {
      const d = parseReportedData('FILE', raw);
      data = { ...d, filename: fileNameOf(d.filepath), size_bytes: content.length };
      bytes = { body: content, contentType: d.mime_type };
      break;
    }
    case 'SCREENSHOT': {
      const d = parseReportedData('SCREENSHOT', raw);
      data = { ...d };
      bytes = { body: content, contentType: d.mime_type };
      break;
    }
    case 'PLAN': {
      const { content: markdown, ...d } = parseReportedData('PLAN', raw);
      if (req.artifact_uid) return updatePlan(deps, run.id, req.artifact_uid, markdown, d);
      data = { ...d, document_uid: newUuid(), notebook_uid: newUuid() };
      bytes = { body: Buffer.from(markdown, 'utf8'), contentType: PLAN_CONTENT_TYPE };
      break;
    }
    case 'PULL_REQUEST':
      data = { ...parseReportedData('PULL_REQUEST', raw) };
      break;
    case 'EXTERNAL_REFERENCE':
      data = { ...parseReportedData('EXTERNAL_REFERENCE', raw) };
      break;
  }

  const blobKey = bytes ? artifactBlobKey(run.id, id) : null;
  if (bytes && blobKey) await deps.blobs.put(blobKey, bytes.body, bytes.contentType);
  try {
    const row = await deps.db.$transaction(async (tx) => {
      const created = await recordArtifact(tx, {
        id,
        runId: run.id,
        type,
        data,
        isPublic: req.is_public,
        blobKey,
        now,
      });
      const event: RunEvent = {
        kind: 'artifact',
        artifact_type: type,
        data: created.data as Record<string, unknown>,
      };
      await tx.runEvent.create({
        data: {
          runId: run.id,
          execution: run.execution,
          kind: event.kind,
          data: event as Prisma.InputJsonValue,
          createdAt: now,
        },
      });
      await tx.run.update({ where: { id: run.id }, data: { updatedAt: now } });
      return created;
    });
    return embeddedView(row);
  } catch (err) {
    if (blobKey) await deps.blobs.delete(blobKey).catch(() => undefined);
    throw err;
  }
}

/** A plan's "current content" is whatever was reported last; title and link follow when given. */
async function updatePlan(
  deps: { db: PrismaClient; blobs: BlobStore },
  runId: string,
  artifactUid: string,
  markdown: string,
  changes: { title?: string; url?: string },
): Promise<ArtifactView> {
  const existing = /^[0-9a-f-]{36}$/i.test(artifactUid)
    ? await deps.db.artifact.findFirst({ where: { id: artifactUid, runId, type: 'PLAN' } })
    : null;
  if (!existing)
    throw new AppError('resource_not_found', 'No PLAN artifact with this artifact_uid on this run');
  const key = existing.blobKey ?? artifactBlobKey(runId, existing.id);
  await deps.blobs.put(key, Buffer.from(markdown, 'utf8'), PLAN_CONTENT_TYPE);
  const data = { ...(existing.data as Record<string, unknown>), ...changes };
  const row = await deps.db.artifact.update({
    where: { id: existing.id },
    data: { data: data as Prisma.InputJsonValue, blobKey: key },
  });
  return embeddedView(row);
}
