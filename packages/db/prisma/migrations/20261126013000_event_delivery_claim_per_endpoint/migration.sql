-- The event dispatcher claims each endpoint's due deliveries on their own (docs/events.md "How the dispatcher
-- scales"): an index range per endpoint in due order, so a pass reads what it claims and not the whole backlog, and
-- one endpoint's backlog cannot crowd the others out of a pass. It replaces the (status, nextAttemptAt) index that only
-- the old global claim used. The order check (a run's oldest pending delivery per endpoint) gets `status` in its
-- index: with three equality columns it is the cheaper index for that lookup whatever the table's statistics say;
-- with two, a table not analyzed yet tied with the claim index and got a plan reading every pending delivery of the
-- endpoint per candidate (4 s a pass at 100k rows).

-- DropIndex
DROP INDEX "EventDelivery_status_nextAttemptAt_idx";

-- DropIndex
DROP INDEX "EventDelivery_endpointId_runId_id_idx";

-- CreateIndex
CREATE INDEX "EventDelivery_endpointId_status_nextAttemptAt_id_idx" ON "EventDelivery"("endpointId", "status", "nextAttemptAt", "id");

-- CreateIndex
CREATE INDEX "EventDelivery_endpointId_runId_status_id_idx" ON "EventDelivery"("endpointId", "runId", "status", "id");
