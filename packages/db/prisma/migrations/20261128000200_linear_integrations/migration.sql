-- A team's Linear integration (docs/integrations.md "Linear"): its key encrypted, its deliveries on one of the team's
-- webhooks, and the reports its runs owe the issue (comments, state moves), sent with retries.

-- CreateTable
CREATE TABLE "LinearIntegration" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "apiKeyCiphertext" BYTEA NOT NULL,
    "apiKeyKeyId" TEXT NOT NULL,
    "agentUserId" TEXT NOT NULL,
    "agentName" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "environmentId" TEXT,
    "triggerLabel" TEXT,
    "teamRepositories" JSONB NOT NULL DEFAULT '{}',
    "prOpenedStateId" TEXT,
    "runEndedStateId" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "brokenReason" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LinearIntegration_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LinearReport" (
    "id" BIGSERIAL NOT NULL,
    "integrationId" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LinearReport_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "LinearIntegration_webhookId_key" ON "LinearIntegration"("webhookId");

-- CreateIndex
CREATE UNIQUE INDEX "LinearIntegration_teamId_name_key" ON "LinearIntegration"("teamId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "LinearReport_dedupeKey_key" ON "LinearReport"("dedupeKey");

-- CreateIndex
CREATE INDEX "LinearReport_status_nextAttemptAt_idx" ON "LinearReport"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "LinearReport_runId_idx" ON "LinearReport"("runId");

-- AddForeignKey
ALTER TABLE "LinearIntegration" ADD CONSTRAINT "LinearIntegration_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LinearIntegration" ADD CONSTRAINT "LinearIntegration_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LinearReport" ADD CONSTRAINT "LinearReport_integrationId_fkey" FOREIGN KEY ("integrationId") REFERENCES "LinearIntegration"("id") ON DELETE CASCADE ON UPDATE CASCADE;
