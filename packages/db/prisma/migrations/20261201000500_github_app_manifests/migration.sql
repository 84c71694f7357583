-- GitHub Apps created through GitHub's manifest flow, waiting for the browser to come back with a code.
CREATE TABLE "GitHubAppManifest" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "stateHash" TEXT NOT NULL,
    "principalId" TEXT NOT NULL,
    "apiKeyId" TEXT,
    "name" TEXT NOT NULL,
    "factoryId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "environmentId" TEXT,
    "triggerLabel" TEXT,
    "repositories" TEXT[],
    "allowedUsers" TEXT[],
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GitHubAppManifest_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "GitHubAppManifest_stateHash_key" ON "GitHubAppManifest"("stateHash");
CREATE INDEX "GitHubAppManifest_expiresAt_idx" ON "GitHubAppManifest"("expiresAt");

ALTER TABLE "GitHubAppManifest" ADD CONSTRAINT "GitHubAppManifest_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
