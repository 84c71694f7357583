-- The event dispatcher claims each endpoint's due deliveries on their own (docs/events.md "How the dispatcher
-- scales"): an index range per endpoint and status, in due order, so a pass reads what it claims and not the whole
-- backlog, and one endpoint's backlog cannot crowd the others out of a pass. It replaces the (status, nextAttemptAt)
-- index that only the old global claim used.

-- DropIndex
DROP INDEX "EventDelivery_status_nextAttemptAt_idx";

-- CreateIndex
CREATE INDEX "EventDelivery_endpointId_status_nextAttemptAt_id_idx" ON "EventDelivery"("endpointId", "status", "nextAttemptAt", "id");
