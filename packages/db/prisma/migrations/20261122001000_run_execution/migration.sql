-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "claimAttempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "debugExecution" INTEGER,
ADD COLUMN     "execution" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "lastHeartbeatAt" TIMESTAMPTZ(3),
ADD COLUMN     "runnerId" TEXT;

-- CreateTable
CREATE TABLE "RunFollowup" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "message" TEXT NOT NULL,
    "mode" TEXT NOT NULL DEFAULT 'normal',
    "routedTo" TEXT NOT NULL,
    "execution" INTEGER NOT NULL,
    "createdById" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMPTZ(3),

    CONSTRAINT "RunFollowup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RunAttachment" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "fileName" TEXT NOT NULL,
    "mimeType" TEXT NOT NULL,
    "data" BYTEA NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunAttachment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Run_state_lastHeartbeatAt_idx" ON "Run"("state", "lastHeartbeatAt");

-- CreateIndex
CREATE INDEX "RunFollowup_runId_deliveredAt_idx" ON "RunFollowup"("runId", "deliveredAt");

-- CreateIndex
CREATE INDEX "RunAttachment_runId_idx" ON "RunAttachment"("runId");

-- AddForeignKey
ALTER TABLE "RunFollowup" ADD CONSTRAINT "RunFollowup_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunAttachment" ADD CONSTRAINT "RunAttachment_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
