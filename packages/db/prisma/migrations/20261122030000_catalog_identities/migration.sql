-- Catalog (docs/catalog.md): environments with guest and link access, the skill discovery cache, and what a run
-- resolved at creation (skill instructions, environment) for the runner.

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "environmentSpec" JSONB,
ADD COLUMN     "skillInstructions" TEXT;

-- CreateTable
CREATE TABLE "Environment" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "scopeType" TEXT NOT NULL DEFAULT 'TEAM',
    "ownerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "dockerImage" TEXT,
    "repositories" JSONB NOT NULL DEFAULT '[]',
    "setupCommands" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "failureSessionRetentionMinutes" INTEGER,
    "shareToken" TEXT,
    "createdById" TEXT NOT NULL,
    "lastEditorId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Environment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EnvironmentAccess" (
    "id" TEXT NOT NULL,
    "environmentId" TEXT NOT NULL,
    "principalId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "grantedById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EnvironmentAccess_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SkillRepoCache" (
    "repoUrl" TEXT NOT NULL,
    "commitSha" TEXT NOT NULL,
    "skills" JSONB NOT NULL DEFAULT '[]',
    "fetchedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "SkillRepoCache_pkey" PRIMARY KEY ("repoUrl")
);

-- CreateIndex
CREATE UNIQUE INDEX "Environment_shareToken_key" ON "Environment"("shareToken");

-- CreateIndex
CREATE INDEX "Environment_teamId_scopeType_idx" ON "Environment"("teamId", "scopeType");

-- CreateIndex
CREATE INDEX "Environment_ownerId_idx" ON "Environment"("ownerId");

-- CreateIndex
CREATE INDEX "EnvironmentAccess_principalId_idx" ON "EnvironmentAccess"("principalId");

-- CreateIndex
CREATE UNIQUE INDEX "EnvironmentAccess_environmentId_principalId_kind_key" ON "EnvironmentAccess"("environmentId", "principalId", "kind");

-- AddForeignKey
ALTER TABLE "Environment" ADD CONSTRAINT "Environment_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EnvironmentAccess" ADD CONSTRAINT "EnvironmentAccess_environmentId_fkey" FOREIGN KEY ("environmentId") REFERENCES "Environment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
