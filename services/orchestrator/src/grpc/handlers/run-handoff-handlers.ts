import type { Logger } from '@conveyor/logger';
import type { RunServiceHandlers } from '@conveyor/proto';
import type { PrismaClient } from '@conveyor/db';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import { checkRedirect } from '../../runs/redirect-check';
import { listHandoffAttachments, uploadHandoffAttachment, type RunHandoffDeps } from '../../runs/run-handoff';

/** Handoff snapshot files and the public session/conversation redirect checks (docs/api-surface.md). */
export function runHandoffHandlers(
  deps: RunHandoffDeps & { db: PrismaClient; logger: Logger },
): Pick<RunServiceHandlers, 'ListHandoffAttachments' | 'UploadHandoffAttachment' | 'CheckRedirect'> {
  const { logger } = deps;
  return {
    ListHandoffAttachments: unary(logger, 'ListHandoffAttachments', async (req) =>
      listHandoffAttachments(deps, requireCaller(req.caller), req.run_id),
    ),
    UploadHandoffAttachment: unary(logger, 'UploadHandoffAttachment', async (req) => {
      const stored = await uploadHandoffAttachment(deps, requireCaller(req.caller), req);
      logger.info(
        { runId: req.caller?.run_id, attachmentId: stored.attachment_id, bytes: stored.size_bytes },
        'handoff attachment stored',
      );
      return stored;
    }),
    CheckRedirect: unary(logger, 'CheckRedirect', async (req) => checkRedirect(deps.db, req)),
  };
}
