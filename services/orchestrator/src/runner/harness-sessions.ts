import type { BlobStore } from '@conveyor/blob-store';
import type { HarnessSession, RunAssignment } from './runner-messages';

/** One kept session per run: the last execution's replaces the one before. */
export const harnessSessionKey = (runId: string): string => `sessions/${runId}/harness-session.json`;

/**
 * The agent CLI sessions of runs, kept by the platform (not by a runner) so that a follow-up after the end resumes
 * the session on whichever runner or worker takes the next execution (docs/harnesses.md). Stored in the blob store
 * beside the run's transcripts, never under a signed link.
 */
export class HarnessSessions {
  constructor(private readonly blobs: BlobStore) {}

  async save(runId: string, session: HarnessSession): Promise<void> {
    const stored = { path: session.path, content: Buffer.from(session.content).toString('base64') };
    await this.blobs.put(harnessSessionKey(runId), Buffer.from(JSON.stringify(stored)), 'application/json');
  }

  /** The run's kept session on a continuation's assignment; a debug agent starts a session of its own. */
  async attach(assignment: RunAssignment): Promise<RunAssignment> {
    if (assignment.debug_session || (assignment.execution ?? 1) <= 1) return assignment;
    const blob = await this.blobs.get(harnessSessionKey(assignment.run_id ?? ''));
    if (!blob) return assignment;
    const stored = JSON.parse(blob.bytes.toString('utf8')) as { path: string; content: string };
    return { ...assignment, session: { path: stored.path, content: Buffer.from(stored.content, 'base64') } };
  }
}
