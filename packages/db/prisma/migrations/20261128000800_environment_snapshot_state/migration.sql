-- An environment's snapshot per team as its runs' runners report it (docs/snapshots.md "State in the API").

-- CreateTable
CREATE TABLE "EnvironmentSnapshot" (
    "environmentId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "snapshotId" TEXT,
    "runId" UUID NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "EnvironmentSnapshot_pkey" PRIMARY KEY ("environmentId","teamId")
);

-- AddForeignKey
ALTER TABLE "EnvironmentSnapshot" ADD CONSTRAINT "EnvironmentSnapshot_environmentId_fkey" FOREIGN KEY ("environmentId") REFERENCES "Environment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EnvironmentSnapshot" ADD CONSTRAINT "EnvironmentSnapshot_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
