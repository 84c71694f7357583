-- Follow-ups accepted for a run, bumped under the run's row lock, so a completion that waited for that lock sees a
-- follow-up committed after its snapshot (docs/run-lifecycle.md "Follow-ups at the end of an execution").

-- AlterTable
ALTER TABLE "Run" ADD COLUMN "followupCount" INTEGER NOT NULL DEFAULT 0;
