-- The trace context a run was (re)started in, for the self-hosted worker's assignment (docs/observability.md).

-- AlterTable
ALTER TABLE "Run" ADD COLUMN "traceContext" JSONB;
