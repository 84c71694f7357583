import type { PrismaClient } from '@conveyor/db';
import { AppError, notFound } from '@conveyor/errors';
import type { Caller } from '../auth/caller';
import { usageByRun } from '../runs/run-usage';
import { runView, type RunView } from '../runs/run-view';
import { canonicalizeUrl } from './canonical-url';

/**
 * `GET /agent/run-by-external-reference?url=` (contract §2.13): the run that reported an EXTERNAL_REFERENCE whose
 * canonical locator equals the canonical form of `url` (canonical-url.ts). Only runs the caller can see (same
 * team) are searched, so "no such reference" and "not yours" are the same 404. When several visible runs reported
 * the same URL, the most recent report wins.
 */
export async function runByExternalReference(
  db: PrismaClient,
  caller: Caller,
  url: string,
): Promise<RunView> {
  if (!url.trim()) throw new AppError('invalid_request', 'url is required');
  const canonical = canonicalizeUrl(url);
  if (!canonical) throw notFound('Run');
  const match = await db.artifact.findFirst({
    where: { canonicalUrl: canonical, type: 'EXTERNAL_REFERENCE', run: { teamId: caller.team_id } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { run: { include: { artifacts: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } } } },
  });
  if (!match) throw notFound('Run');
  const usage = await usageByRun(db, [match.run.id]);
  return runView(match.run, match.run.artifacts, usage.get(match.run.id));
}
