import type { BlobStore } from '@conveyor/blob-store';
import type { Artifact, PrismaClient } from '@conveyor/db';
import { AppError, notFound } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import { isUuid } from '../runs/run-access';
import type { BlobLinkSigner } from '../blobs/blob-links';

export interface ArtifactReadDeps {
  db: PrismaClient;
  blobs: BlobStore;
  sign: BlobLinkSigner;
  /** Lifetime of download URLs. */
  ttlSeconds: number;
}

type Data = Record<string, unknown>;
const DOWNLOADABLE: ReadonlySet<string> = new Set(['FILE', 'SCREENSHOT', 'PLAN']);

/** An artifact as runs and harnesses see it; `data_json` is its type's data (docs/artifacts.md). */
export interface ArtifactView {
  artifact_uid: string;
  artifact_type: string;
  created_at: string;
  data_json: string;
  run_id: string;
  is_public: boolean;
}

/** A time-limited signed link to an artifact's bytes. */
export interface ArtifactDownload {
  url: string;
  expires_at: string;
}

/** The artifact as embedded in a run (contract §2.3), plus its uid and run. */
export function embeddedView(row: Artifact): ArtifactView {
  return {
    artifact_uid: row.id,
    artifact_type: row.type,
    created_at: row.createdAt.toISOString(),
    data_json: JSON.stringify(row.data ?? {}),
    run_id: row.runId,
    is_public: row.isPublic,
  };
}

/**
 * The access rule of §5: a public artifact is readable by anyone; a private one only by a caller who can see its
 * run (same team). A malformed UID is a 400; a missing artifact and one the caller may not see are the same 404.
 */
export async function findReadableArtifact(
  db: PrismaClient,
  caller: Caller | null,
  artifactUid: string,
): Promise<Artifact & { run: { teamId: string } }> {
  if (!isUuid(artifactUid)) throw new AppError('invalid_request', 'artifactUid must be a UUID');
  const row = await db.artifact.findUnique({
    where: { id: artifactUid },
    include: { run: { select: { teamId: true } } },
  });
  if (!row) throw notFound('Artifact');
  if (!row.isPublic && !(caller?.team_id && caller.team_id === row.run.teamId)) throw notFound('Artifact');
  return row;
}

async function signedLink(deps: ArtifactReadDeps, row: Artifact): Promise<ArtifactDownload> {
  if (!DOWNLOADABLE.has(row.type))
    throw new AppError('operation_not_supported', `${row.type} artifacts have nothing to download`);
  if (!row.blobKey) throw new AppError('resource_not_found', 'This artifact has no stored content');
  const expiresAt = new Date(Date.now() + deps.ttlSeconds * 1000);
  return { url: await deps.sign(row.blobKey, expiresAt), expires_at: expiresAt.toISOString() };
}

const pick = (data: Data, keys: string[]): Data =>
  Object.fromEntries(keys.filter((k) => data[k] !== undefined && data[k] !== null).map((k) => [k, data[k]]));

/**
 * `GET /agent/artifacts/{uid}` (contract §5.1): files and screenshots with a fresh signed URL, plans with their
 * current content inline. Anonymous readers of a public file do not learn its conversation-relative path.
 * Pull requests and external references have no variant in the contract; they answer with their embedded data.
 */
export async function getArtifact(
  deps: ArtifactReadDeps,
  caller: Caller | null,
  artifactUid: string,
): Promise<ArtifactView> {
  const row = await findReadableArtifact(deps.db, caller, artifactUid);
  const stored = (row.data ?? {}) as Data;
  const anonymous = !(caller?.team_id && caller.team_id === row.run.teamId);
  let data: Data;
  switch (row.type) {
    case 'PLAN': {
      const blob = row.blobKey ? await deps.blobs.get(row.blobKey) : undefined;
      data = {
        content: typeof stored.content === 'string' ? stored.content : (blob?.bytes.toString('utf8') ?? ''),
        content_type: 'text/markdown',
        document_uid: stored.document_uid ?? row.id,
        notebook_uid: stored.notebook_uid ?? row.id,
        ...pick(stored, ['title', 'url']),
      };
      break;
    }
    case 'FILE': {
      const link = await signedLink(deps, row);
      data = {
        content_type: stored.mime_type ?? 'application/octet-stream',
        download_url: link.url,
        expires_at: link.expires_at,
        filename: stored.filename ?? '',
        ...pick(
          stored,
          anonymous
            ? ['size_bytes', 'description', 'title']
            : ['filepath', 'size_bytes', 'description', 'title'],
        ),
      };
      break;
    }
    case 'SCREENSHOT': {
      const link = await signedLink(deps, row);
      data = {
        content_type: stored.mime_type ?? 'application/octet-stream',
        download_url: link.url,
        expires_at: link.expires_at,
        ...pick(stored, ['description']),
      };
      break;
    }
    default:
      data = stored;
  }
  return { ...embeddedView(row), data_json: JSON.stringify(data) };
}

/** `GET /agent/artifacts/{uid}/download`: where to redirect; same access rule. */
export async function getArtifactDownload(
  deps: ArtifactReadDeps,
  caller: Caller | null,
  artifactUid: string,
): Promise<ArtifactDownload> {
  return signedLink(deps, await findReadableArtifact(deps.db, caller, artifactUid));
}
