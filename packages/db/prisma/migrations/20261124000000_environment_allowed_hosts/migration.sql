-- Per-environment egress allow-list (docs/sandbox.md): hosts a run of this environment may reach on top of the
-- installation's list. Never opens private, loopback or link-local addresses.
ALTER TABLE "Environment" ADD COLUMN "allowedHosts" TEXT[] DEFAULT ARRAY[]::TEXT[];
