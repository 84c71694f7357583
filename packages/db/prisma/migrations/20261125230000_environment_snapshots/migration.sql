-- Per-environment opt-out of environment snapshots (docs/snapshots.md): false = every run sets up from scratch.
ALTER TABLE "Environment" ADD COLUMN "snapshots" BOOLEAN NOT NULL DEFAULT true;
