-- CreateTable
CREATE TABLE "RunHandoffAttachment" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "execution" INTEGER NOT NULL,
    "fileName" TEXT NOT NULL,
    "mimeType" TEXT,
    "sizeBytes" INTEGER NOT NULL,
    "blobKey" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunHandoffAttachment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RunHandoffAttachment_runId_execution_idx" ON "RunHandoffAttachment"("runId", "execution");

-- AddForeignKey
ALTER TABLE "RunHandoffAttachment" ADD CONSTRAINT "RunHandoffAttachment_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateIndex
CREATE INDEX "Run_sessionId_idx" ON "Run"("sessionId");
