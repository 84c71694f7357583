-- Deadline of each setup step of an environment's runs, in seconds; null = the default (docs/catalog.md).
ALTER TABLE "Environment" ADD COLUMN "setupTimeoutSeconds" INTEGER;
