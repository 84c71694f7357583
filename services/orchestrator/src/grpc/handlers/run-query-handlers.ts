import type { BlobStore } from '@conveyor/blob-store';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { RunServiceHandlers } from '@conveyor/proto';
import { runPageToProto } from '../mappers/run-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import type { Caller } from '../../auth/caller';
import { getConversation } from '../../runs/get-conversation';
import { listRuns } from '../../runs/list-runs';
import type { RunListRequest } from '../../runs/run-list-filters';
import { getTimeline } from '../../runs/run-timeline';
import { getTranscript, type LinkSigner } from '../../runs/transcript';

/** ListRuns exactly as the RPC answers it; bench/ measures this through index.ts. */
export async function listRunsRpc(db: PrismaClient, caller: Caller, request: RunListRequest) {
  return runPageToProto(await listRuns(db, caller, request));
}

export interface RunQueryDeps {
  db: PrismaClient;
  logger: Logger;
  blobs: BlobStore;
  links: LinkSigner;
}

/** Read-side RPCs of runs: listing and inspection. */
export function runQueryHandlers({
  db,
  logger,
  blobs,
  links,
}: RunQueryDeps): Pick<RunServiceHandlers, 'ListRuns' | 'GetTimeline' | 'GetConversation' | 'GetTranscript'> {
  return {
    ListRuns: unary(logger, 'ListRuns', (req) => listRunsRpc(db, requireCaller(req.caller), req)),
    GetTimeline: unary(logger, 'GetTimeline', async (req) =>
      getTimeline(db, requireCaller(req.caller), req.run_id),
    ),
    GetConversation: unary(logger, 'GetConversation', async (req) => ({
      conversation_json: JSON.stringify(await getConversation(db, requireCaller(req.caller), req)),
    })),
    GetTranscript: unary(logger, 'GetTranscript', async (req) =>
      getTranscript(db, blobs, links, requireCaller(req.caller), req),
    ),
  };
}
