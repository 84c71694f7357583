-- Guests by invitation (docs/guests.md): an invitation by e-mail grants nothing until the invitee accepts it.

-- CreateTable
CREATE TABLE "EnvironmentInvitation" (
    "id" TEXT NOT NULL,
    "environmentId" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "invitedById" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EnvironmentInvitation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "EnvironmentInvitation_environmentId_email_key" ON "EnvironmentInvitation"("environmentId", "email");

-- CreateIndex
CREATE INDEX "EnvironmentInvitation_email_idx" ON "EnvironmentInvitation"("email");

-- AddForeignKey
ALTER TABLE "EnvironmentInvitation" ADD CONSTRAINT "EnvironmentInvitation_environmentId_fkey" FOREIGN KEY ("environmentId") REFERENCES "Environment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Guests added before this release never consented: their grants become pending invitations.
INSERT INTO "EnvironmentInvitation" ("id", "environmentId", "email", "invitedById", "createdAt")
SELECT 'einv_' || g."id", g."environmentId", lower(u."email"), coalesce(g."grantedById", ''), g."createdAt"
FROM "EnvironmentAccess" g JOIN "User" u ON u."id" = g."principalId"
WHERE g."kind" = 'GUEST'
ON CONFLICT DO NOTHING;
DELETE FROM "EnvironmentAccess" WHERE "kind" = 'GUEST';
