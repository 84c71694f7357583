-- A run's adoption record, sealed, for another runner replica to take the run over (docs/sandbox.md "Run leases").

-- CreateTable
CREATE TABLE "RunLease" (
    "id" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "execution" INTEGER NOT NULL,
    "recordCiphertext" BYTEA NOT NULL,
    "recordKeyId" TEXT NOT NULL,
    "releasedAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "RunLease_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "RunLease_runId_key" ON "RunLease"("runId");

-- AddForeignKey
ALTER TABLE "RunLease" ADD CONSTRAINT "RunLease_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
