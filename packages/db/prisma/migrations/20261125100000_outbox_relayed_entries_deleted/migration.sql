-- The outbox relay deletes an entry once its job is enqueued (services/orchestrator/src/runs/outbox-relay.ts), so the
-- table holds only the backlog: entries already relayed go, and so does the column that marked them.
DELETE FROM "OutboxEntry" WHERE "processedAt" IS NOT NULL;
DROP INDEX "OutboxEntry_processedAt_id_idx";
ALTER TABLE "OutboxEntry" DROP COLUMN "processedAt";
CREATE INDEX "OutboxEntry_attempts_id_idx" ON "OutboxEntry"("attempts", "id");
