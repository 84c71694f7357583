CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateEnum
CREATE TYPE "TeamRole" AS ENUM ('ADMIN', 'MEMBER');

-- CreateEnum
CREATE TYPE "PrincipalType" AS ENUM ('USER', 'AGENT');

-- CreateEnum
CREATE TYPE "RunState" AS ENUM ('QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED');

-- CreateTable
CREATE TABLE "Team" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "metadataFilteringEnabled" BOOLEAN NOT NULL DEFAULT true,
    "agentIdentityLimit" INTEGER NOT NULL DEFAULT 10,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Team_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "displayName" TEXT NOT NULL,
    "role" "TeamRole" NOT NULL DEFAULT 'MEMBER',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentIdentity" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "config" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentIdentity_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "userId" TEXT,
    "agentIdentityId" TEXT,
    "runId" UUID,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Run" (
    "id" UUID NOT NULL,
    "teamId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "state" "RunState" NOT NULL DEFAULT 'QUEUED',
    "mode" TEXT NOT NULL DEFAULT 'normal',
    "source" TEXT NOT NULL DEFAULT 'API',
    "executionLocation" TEXT NOT NULL DEFAULT 'REMOTE',
    "creatorType" "PrincipalType" NOT NULL DEFAULT 'USER',
    "creatorId" TEXT NOT NULL,
    "executorType" "PrincipalType" NOT NULL DEFAULT 'USER',
    "executorId" TEXT NOT NULL,
    "configName" TEXT,
    "modelId" TEXT,
    "environmentId" TEXT,
    "skillSpec" TEXT,
    "harness" TEXT NOT NULL DEFAULT 'demo',
    "workerHost" TEXT,
    "config" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "scheduleId" TEXT,
    "scheduleName" TEXT,
    "scheduleCron" TEXT,
    "parentRunId" UUID,
    "ancestorIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "conversationId" UUID NOT NULL,
    "sessionId" UUID NOT NULL,
    "statusMessage" TEXT,
    "errorCode" TEXT,
    "retryable" BOOLEAN,
    "sessionDebugUntil" TIMESTAMPTZ(3),
    "startedAt" TIMESTAMPTZ(3),
    "endedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RunEvent" (
    "id" BIGSERIAL NOT NULL,
    "runId" UUID NOT NULL,
    "execution" INTEGER NOT NULL DEFAULT 1,
    "kind" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Artifact" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "isPublic" BOOLEAN NOT NULL DEFAULT false,
    "data" JSONB NOT NULL DEFAULT '{}',
    "canonicalUrl" TEXT,
    "blobKey" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Artifact_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OutboxEntry" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "processedAt" TIMESTAMPTZ(3),

    CONSTRAINT "OutboxEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE INDEX "User_teamId_idx" ON "User"("teamId");

-- CreateIndex
CREATE INDEX "AgentIdentity_teamId_createdAt_idx" ON "AgentIdentity"("teamId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_prefix_key" ON "ApiKey"("prefix");

-- CreateIndex
CREATE INDEX "ApiKey_teamId_idx" ON "ApiKey"("teamId");

-- CreateIndex
CREATE INDEX "ApiKey_agentIdentityId_idx" ON "ApiKey"("agentIdentityId");

-- CreateIndex
CREATE INDEX "ApiKey_runId_idx" ON "ApiKey"("runId");

-- CreateIndex
CREATE INDEX "Run_teamId_updatedAt_id_idx" ON "Run"("teamId", "updatedAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Run_teamId_createdAt_id_idx" ON "Run"("teamId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Run_teamId_title_id_idx" ON "Run"("teamId", "title", "id");

-- CreateIndex
CREATE INDEX "Run_teamId_skillSpec_id_idx" ON "Run"("teamId", "skillSpec", "id");

-- CreateIndex
CREATE INDEX "Run_teamId_state_idx" ON "Run"("teamId", "state");

-- CreateIndex
CREATE INDEX "Run_teamId_configName_idx" ON "Run"("teamId", "configName");

-- CreateIndex
CREATE INDEX "Run_teamId_modelId_idx" ON "Run"("teamId", "modelId");

-- CreateIndex
CREATE INDEX "Run_teamId_creatorId_idx" ON "Run"("teamId", "creatorId");

-- CreateIndex
CREATE INDEX "Run_teamId_executorId_idx" ON "Run"("teamId", "executorId");

-- CreateIndex
CREATE INDEX "Run_teamId_source_idx" ON "Run"("teamId", "source");

-- CreateIndex
CREATE INDEX "Run_teamId_executionLocation_idx" ON "Run"("teamId", "executionLocation");

-- CreateIndex
CREATE INDEX "Run_teamId_environmentId_idx" ON "Run"("teamId", "environmentId");

-- CreateIndex
CREATE INDEX "Run_teamId_scheduleId_idx" ON "Run"("teamId", "scheduleId");

-- CreateIndex
CREATE INDEX "Run_ancestorIds_idx" ON "Run" USING GIN ("ancestorIds");

-- CreateIndex
CREATE INDEX "Run_metadata_idx" ON "Run" USING GIN ("metadata" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "Run_conversationId_idx" ON "Run"("conversationId");

-- CreateIndex
CREATE INDEX "RunEvent_runId_id_idx" ON "RunEvent"("runId", "id");

-- CreateIndex
CREATE INDEX "Artifact_runId_idx" ON "Artifact"("runId");

-- CreateIndex
CREATE INDEX "Artifact_type_runId_idx" ON "Artifact"("type", "runId");

-- CreateIndex
CREATE INDEX "Artifact_canonicalUrl_idx" ON "Artifact"("canonicalUrl");

-- CreateIndex
CREATE INDEX "OutboxEntry_processedAt_id_idx" ON "OutboxEntry"("processedAt", "id");

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentIdentity" ADD CONSTRAINT "AgentIdentity_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_agentIdentityId_fkey" FOREIGN KEY ("agentIdentityId") REFERENCES "AgentIdentity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunEvent" ADD CONSTRAINT "RunEvent_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Artifact" ADD CONSTRAINT "Artifact_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
