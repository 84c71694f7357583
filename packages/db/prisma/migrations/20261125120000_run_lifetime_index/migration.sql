-- Run listing: the min and max lifetime ("updatedAt" - "createdAt") of a team's runs, each one index descent. They
-- bound a filter on one timestamp in terms of the other (createdAt < X implies updatedAt < X + max lifetime), so
-- `created_before` under the updated_at sort, `created_after` under it ascending and `updated_after` under the
-- created_at sort are index range scans instead of walks over the rest of the team's history (docs/runs.md).
-- An expression index: schema.prisma cannot express it; src/expression-indexes.ts declares it for the drift check.

-- CreateIndex
CREATE INDEX "Run_teamId_lifetime_idx" ON "Run" ("teamId", ("updatedAt" - "createdAt"));
