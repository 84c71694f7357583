import type { BlobStore } from '@conveyor/blob-store';
import { signBlobUrl } from '@conveyor/blob-store';
import { notFound } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { conversationRuns, type ConversationRef } from './get-conversation';

/** How signed download links are made: the orchestrator signs them and verifies them again in ReadBlob. */
export interface LinkSigner {
  secret: string;
  /** Public API base ending in /v1. */
  baseUrl: string;
  ttlSeconds: number;
  now?: () => Date;
}

export const TRANSCRIPT_CONTENT_TYPE = 'application/x-ndjson';

/** Where the runner-side CompleteRun stores the raw transcript of one execution (JSON lines). */
export const executionTranscriptKey = (runId: string, execution: number): string =>
  `transcripts/${runId}/${execution}.jsonl`;

/** The combined transcripts, rewritten on request: every execution of a run, every run of a conversation. */
export const runTranscriptKey = (runId: string): string => `transcripts/${runId}/all.jsonl`;
export const conversationTranscriptKey = (conversationId: string): string =>
  `conversations/${conversationId}/all.jsonl`;

/**
 * A time-limited link to the raw transcript (JSON lines) of a run, or of a whole conversation: the stored
 * per-execution transcripts in order. One part is linked as is; several are joined into one combined blob
 * (`transcripts/<runId>/all.jsonl`, `conversations/<id>/all.jsonl`) rewritten on each request, so a link
 * always covers every execution finished when it was issued. 404 when nothing has been stored yet.
 */
export async function getTranscript(
  db: PrismaClient,
  blobs: BlobStore,
  signer: LinkSigner,
  caller: Caller,
  request: ConversationRef,
): Promise<{ url: string; expires_at: string }> {
  const { conversationId, runs } = await conversationRuns(db, caller, request);
  const scope = request.run_id ? runs.filter((r) => r.id === request.run_id) : runs;
  const keys = scope.flatMap((run) =>
    Array.from({ length: Math.max(run.execution, 1) }, (_, i) => executionTranscriptKey(run.id, i + 1)),
  );
  const parts = (await Promise.all(keys.map(async (key) => ({ key, blob: await blobs.get(key) })))).filter(
    (p) => p.blob !== undefined,
  );
  if (parts.length === 0) throw notFound('Transcript');

  let key = parts[0]!.key;
  if (parts.length > 1) {
    key = request.run_id ? runTranscriptKey(request.run_id) : conversationTranscriptKey(conversationId);
    const chunks = parts.flatMap(({ blob }) => {
      const bytes = blob!.bytes;
      return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? [bytes, Buffer.from('\n')] : [bytes];
    });
    await blobs.put(key, Buffer.concat(chunks), TRANSCRIPT_CONTENT_TYPE);
  }
  const now = signer.now?.() ?? new Date();
  const expiresAt = new Date(now.getTime() + signer.ttlSeconds * 1000);
  return {
    url: signBlobUrl(signer.baseUrl, key, expiresAt, signer.secret),
    expires_at: expiresAt.toISOString(),
  };
}
