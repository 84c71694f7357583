-- A team's GitHub App (docs/integrations.md): its private key encrypted, its deliveries on one of the team's webhooks.

-- CreateTable
CREATE TABLE "GitHubApp" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "botLogin" TEXT NOT NULL,
    "privateKeyCiphertext" BYTEA NOT NULL,
    "privateKeyKeyId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "environmentId" TEXT,
    "triggerLabel" TEXT,
    "repositories" TEXT[],
    "allowedUsers" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'active',
    "brokenReason" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GitHubApp_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "GitHubApp_webhookId_key" ON "GitHubApp"("webhookId");

-- CreateIndex
CREATE UNIQUE INDEX "GitHubApp_teamId_name_key" ON "GitHubApp"("teamId", "name");

-- AddForeignKey
ALTER TABLE "GitHubApp" ADD CONSTRAINT "GitHubApp_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GitHubApp" ADD CONSTRAINT "GitHubApp_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;
