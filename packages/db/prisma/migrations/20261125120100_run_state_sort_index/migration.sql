-- Run listing: the state index carries the default sort, so a one-state filter (the console's "queued" or "failed"
-- tab) walks only that state's runs in updated_at order instead of every run of the team. It replaces
-- ("teamId", "state"), which it serves as well, so Run keeps the same number of indexes (docs/runs.md).

-- DropIndex
DROP INDEX "Run_teamId_state_idx";

-- CreateIndex
CREATE INDEX "Run_teamId_state_updatedAt_id_idx" ON "Run"("teamId", "state", "updatedAt" DESC, "id" DESC);
