-- Judge runs and their scores, worker tokens and self-hosted worker connections (docs/artifacts.md, docs/workers.md).

-- CreateTable
CREATE TABLE "RunJudge" (
    "judgeRunId" UUID NOT NULL,
    "scoredRunId" UUID NOT NULL,
    "evaluations" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunJudge_pkey" PRIMARY KEY ("judgeRunId")
);

-- CreateTable
CREATE TABLE "RunScore" (
    "id" UUID NOT NULL,
    "judgeRunId" UUID NOT NULL,
    "scoredRunId" UUID NOT NULL,
    "evaluation" TEXT NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "passed" BOOLEAN,
    "reasoning" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunScore_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WorkerToken" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "WorkerToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WorkerConnection" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "tokenId" TEXT NOT NULL,
    "workerId" TEXT NOT NULL,
    "hostname" TEXT NOT NULL DEFAULT '',
    "version" TEXT NOT NULL DEFAULT '',
    "capacity" INTEGER NOT NULL DEFAULT 1,
    "activeRuns" INTEGER NOT NULL DEFAULT 0,
    "connectedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastHeartbeatAt" TIMESTAMPTZ(3) NOT NULL,
    "disconnectedAt" TIMESTAMPTZ(3),

    CONSTRAINT "WorkerConnection_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RunJudge_scoredRunId_idx" ON "RunJudge"("scoredRunId");

-- CreateIndex
CREATE INDEX "RunScore_scoredRunId_createdAt_idx" ON "RunScore"("scoredRunId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "RunScore_judgeRunId_evaluation_key" ON "RunScore"("judgeRunId", "evaluation");

-- CreateIndex
CREATE UNIQUE INDEX "WorkerToken_prefix_key" ON "WorkerToken"("prefix");

-- CreateIndex
CREATE INDEX "WorkerToken_teamId_idx" ON "WorkerToken"("teamId");

-- CreateIndex
CREATE INDEX "WorkerConnection_teamId_lastHeartbeatAt_idx" ON "WorkerConnection"("teamId", "lastHeartbeatAt");

-- CreateIndex
CREATE INDEX "WorkerConnection_tokenId_idx" ON "WorkerConnection"("tokenId");

-- AddForeignKey
ALTER TABLE "RunJudge" ADD CONSTRAINT "RunJudge_judgeRunId_fkey" FOREIGN KEY ("judgeRunId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunJudge" ADD CONSTRAINT "RunJudge_scoredRunId_fkey" FOREIGN KEY ("scoredRunId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunScore" ADD CONSTRAINT "RunScore_judgeRunId_fkey" FOREIGN KEY ("judgeRunId") REFERENCES "RunJudge"("judgeRunId") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkerToken" ADD CONSTRAINT "WorkerToken_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkerConnection" ADD CONSTRAINT "WorkerConnection_tokenId_fkey" FOREIGN KEY ("tokenId") REFERENCES "WorkerToken"("id") ON DELETE CASCADE ON UPDATE CASCADE;
