import { newUuid, type Artifact, type Prisma } from '@conveyor/db';
import type { ArtifactType } from '@conveyor/run-events';
import { canonicalizeUrl } from './canonical-url';

/** Types whose `data` carries its own `artifact_uid` (usable with GET /agent/artifacts/{uid}, contract §2.3). */
const SELF_REFERENCING: ReadonlySet<string> = new Set(['FILE', 'SCREENSHOT', 'PLAN']);

export interface ArtifactRecord {
  runId: string;
  type: ArtifactType;
  data: Record<string, unknown>;
  isPublic?: boolean;
  /** Where the bytes live in the blob store (files, screenshots, plan content). */
  blobKey?: string | null;
  id?: string;
  now?: Date;
}

/** Blob key of an artifact's bytes; one per artifact, replaced when a plan's content changes. */
export const artifactBlobKey = (runId: string, artifactUid: string): string =>
  `artifacts/${runId}/${artifactUid}`;

export interface ArtifactRow {
  id: string;
  runId: string;
  type: string;
  isPublic: boolean;
  data: Record<string, unknown>;
  canonicalUrl: string | null;
  blobKey: string | null;
  createdAt: Date;
}

/** An artifact's row as it is stored: `artifact_uid` stamped into the types that carry it, a canonical locator. */
export function artifactRow(record: ArtifactRecord): ArtifactRow {
  const id = record.id ?? newUuid();
  const data: Record<string, unknown> = { ...record.data };
  if (SELF_REFERENCING.has(record.type)) data.artifact_uid = id;
  let canonicalUrl: string | null = null;
  if (record.type === 'EXTERNAL_REFERENCE' && typeof data.url === 'string') {
    canonicalUrl = canonicalizeUrl(data.url) ?? null;
    if (canonicalUrl) data.url = canonicalUrl;
  }
  return {
    id,
    runId: record.runId,
    type: record.type,
    isPublic: record.isPublic ?? false,
    data,
    canonicalUrl,
    blobKey: record.blobKey ?? null,
    createdAt: record.now ?? new Date(),
  };
}

/**
 * The one way an artifact row is written, for both paths: the runner's event stream (`artifact` events, as plain
 * SQL in report-events.ts with the same artifactRow) and harness support (`POST /harness-support/report-artifact`).
 * It stamps `artifact_uid` into the data of the types that carry it and stores an external reference's canonical URL
 * (docs/artifacts.md) as its locator; an external reference whose URL cannot be canonicalised is kept but cannot be
 * looked up.
 */
export async function recordArtifact(
  tx: Prisma.TransactionClient,
  record: ArtifactRecord,
): Promise<Artifact> {
  const row = artifactRow(record);
  return tx.artifact.create({ data: { ...row, data: row.data as Prisma.InputJsonValue } });
}
