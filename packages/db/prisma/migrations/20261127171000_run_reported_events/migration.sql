-- A runner sends an event batch again when its answer was lost (the orchestrator restarted, PostgreSQL dropped the
-- connection after the commit): the run counts the current execution's recorded events, so the batch, numbered by
-- its first event, records only what is new (docs/run-lifecycle.md "No outcome is lost"). A claim starts it at 0.

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "reportedEvents" INTEGER NOT NULL DEFAULT 0;
