-- Run retention (docs/operations.md "Retention"): a team's own retention in days overrides the installation default
-- (RUN_RETENTION_DAYS); null = the default, 0 = keep this team's runs forever. The retention pass finds each team's
-- expired runs through the existing ("teamId", "state", "updatedAt" DESC, "id" DESC) index.

-- AlterTable
ALTER TABLE "Team" ADD COLUMN "runRetentionDays" INTEGER;
