import type { PrismaClient } from '@conveyor/db';
import { insertRuns } from '../runs/insert-runs';
import type { DeliveryStore, LockedWork, NewDeliveryEntry, SignedContentClaim } from './delivery-store';

/** The delivery log in PostgreSQL: a fixed number of statements per batch, whatever its size. */
export class PrismaDeliveryStore implements DeliveryStore {
  constructor(private readonly db: PrismaClient) {}

  findWebhooks(uids: string[]) {
    return this.db.webhook.findMany({ where: { id: { in: uids } } });
  }

  findEntriesAt(positions: string[]) {
    return this.db.webhookDelivery.findMany({ where: { sourcePosition: { in: positions } } });
  }

  async insertEntries(entries: NewDeliveryEntry[]): Promise<void> {
    // One multi-row INSERT … ON CONFLICT DO NOTHING: the unique sourcePosition and (webhookId, acceptedDeliveryId).
    await this.db.webhookDelivery.createMany({ data: entries, skipDuplicates: true });
  }

  async claimSignedContents(claims: SignedContentClaim[]): Promise<SignedContentClaim[]> {
    // INSERT … ON CONFLICT DO NOTHING on the (webhookId, digest) key, then the winners read back.
    await this.db.webhookSignedContent.createMany({ data: claims, skipDuplicates: true });
    const stored = await this.db.webhookSignedContent.findMany({
      where: {
        webhookId: { in: claims.map((c) => c.webhookId) },
        digest: { in: claims.map((c) => c.digest) },
      },
      select: { webhookId: true, digest: true, sourcePosition: true },
    });
    return stored;
  }

  findEnabledAutomations(teamIds: string[], webhookUids: string[]) {
    return this.db.automation.findMany({
      where: { teamId: { in: teamIds }, enabled: true, webhookIds: { hasSome: webhookUids } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  processLocked(
    ids: string[],
    work: (open: ReadonlySet<string>) => Promise<LockedWork>,
  ): Promise<LockedWork> {
    return this.db.$transaction(
      async (tx) => {
        const locked = await tx.$queryRaw<Array<{ id: string; processedAt: Date | null }>>`
          SELECT id::text AS id, "processedAt" FROM "WebhookDelivery" WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
        const result = await work(new Set(locked.filter((l) => !l.processedAt).map((l) => l.id)));
        const { processed, runs } = result;
        if (processed.length === 0) return result;
        await insertRuns(tx, runs);
        const done = processed.map((p) => ({ id: p.id, outcome: p.outcomes, run_ids: p.runIds }));
        await tx.$executeRaw`
          UPDATE "WebhookDelivery" AS d SET "processedAt" = ${new Date()}, outcome = v.outcome, "runIds" = v.run_ids
            FROM jsonb_to_recordset(${JSON.stringify(done)}::jsonb) AS v(id uuid, outcome jsonb, run_ids text[])
           WHERE d.id = v.id`;
        return result;
      },
      // Runs are prepared while the locks are held (catalog lookups, possibly git for skills).
      { timeout: 120_000, maxWait: 120_000 },
    );
  }
}
