-- Scheduled agents (docs/schedules.md): the schedule rows BullMQ job schedulers are reconciled with, and one firing
-- row per tick that started a run (its primary key makes a tick start at most one run).

-- CreateTable
CREATE TABLE "Schedule" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "prompt" TEXT NOT NULL,
    "mode" TEXT NOT NULL DEFAULT 'normal',
    "agentConfig" JSONB NOT NULL DEFAULT '{}',
    "agentUid" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdByType" "PrincipalType" NOT NULL DEFAULT 'USER',
    "createdById" TEXT NOT NULL,
    "updatedByType" "PrincipalType" NOT NULL DEFAULT 'USER',
    "updatedById" TEXT NOT NULL,
    "lastRanAt" TIMESTAMPTZ(3),
    "lastSpawnError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Schedule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScheduleFiring" (
    "scheduleId" TEXT NOT NULL,
    "tickAt" TIMESTAMPTZ(3) NOT NULL,
    "runId" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ScheduleFiring_pkey" PRIMARY KEY ("scheduleId","tickAt")
);

-- CreateIndex
CREATE INDEX "Schedule_teamId_name_idx" ON "Schedule"("teamId", "name");

-- AddForeignKey
ALTER TABLE "Schedule" ADD CONSTRAINT "Schedule_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScheduleFiring" ADD CONSTRAINT "ScheduleFiring_scheduleId_fkey" FOREIGN KEY ("scheduleId") REFERENCES "Schedule"("id") ON DELETE CASCADE ON UPDATE CASCADE;
