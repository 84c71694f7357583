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

/**
 * The one way an artifact row is written, for both paths: the runner's event stream (`artifact` events) and
 * harness support (`POST /harness-support/report-artifact`). It stamps `artifact_uid` into the data of the
 * types that carry it and stores an external reference's canonical URL (docs/artifacts.md) as its locator;
 * an external reference whose URL cannot be canonicalised is kept but cannot be looked up.
 */
export async function recordArtifact(
  tx: Prisma.TransactionClient,
  record: ArtifactRecord,
): Promise<Artifact> {
  const id = record.id ?? newUuid();
  const data: Record<string, unknown> = { ...record.data };
  if (SELF_REFERENCING.has(record.type)) data.artifact_uid = id;
  let canonicalUrl: string | null = null;
  if (record.type === 'EXTERNAL_REFERENCE' && typeof data.url === 'string') {
    canonicalUrl = canonicalizeUrl(data.url) ?? null;
    if (canonicalUrl) data.url = canonicalUrl;
  }
  return tx.artifact.create({
    data: {
      id,
      runId: record.runId,
      type: record.type,
      isPublic: record.isPublic ?? false,
      data: data as Prisma.InputJsonValue,
      canonicalUrl,
      blobKey: record.blobKey ?? null,
      createdAt: record.now ?? new Date(),
    },
  });
}
