import type { BlobStore } from '@conveyor/blob-store';
import type { PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { ArtifactServiceHandlers } from '@conveyor/proto';
import { runToProto } from '../mappers/run-to-proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import { submitScores } from '../../scores/submit-scores';
import { getArtifact, getArtifactDownload } from '../../artifacts/artifact-views';
import type { BlobLinkSigner } from '../../blobs/blob-links';
import { reportArtifact } from '../../artifacts/report-artifact';
import { runByExternalReference } from '../../artifacts/run-by-external-reference';

export interface ArtifactHandlerDeps {
  db: PrismaClient;
  blobs: BlobStore;
  sign: BlobLinkSigner;
  ttlSeconds: number;
  logger: Logger;
}

/** ArtifactService: harness-support reports, artifact reads, the external-reference lookup and judge scores. */
export function artifactHandlers(deps: ArtifactHandlerDeps): ArtifactServiceHandlers {
  const { logger } = deps;
  // Anonymous reads carry no caller (or one without a team): treated alike.
  const optionalCaller = <C extends { team_id: string } | null>(caller: C): C | null =>
    caller?.team_id ? caller : null;
  return {
    ReportArtifact: unary(logger, 'ReportArtifact', async (req) => {
      const view = await reportArtifact(deps, requireCaller(req.caller), req);
      logger.info(
        { runId: view.run_id, artifactUid: view.artifact_uid, type: view.artifact_type },
        'artifact reported',
      );
      return view;
    }),
    GetArtifact: unary(logger, 'GetArtifact', (req) =>
      getArtifact(deps, optionalCaller(req.caller), req.artifact_uid),
    ),
    GetArtifactDownload: unary(logger, 'GetArtifactDownload', (req) =>
      getArtifactDownload(deps, optionalCaller(req.caller), req.artifact_uid),
    ),
    GetRunByExternalReference: unary(logger, 'GetRunByExternalReference', (req) =>
      runByExternalReference(deps.db, requireCaller(req.caller), req.url).then(runToProto),
    ),
    SubmitScores: unary(logger, 'SubmitScores', async (req) => {
      const result = await submitScores(deps.db, requireCaller(req.caller), req.run_id, req.verdicts_json);
      const results = result.results ?? [];
      logger.info(
        {
          runId: result.run_id,
          judgeRunId: result.judge_run_id,
          accepted: results.filter((r) => r.accepted).length,
          rejected: results.filter((r) => !r.accepted).length,
        },
        'scores submitted',
      );
      return result;
    }),
  };
}
