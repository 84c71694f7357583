-- A team's Slack app (docs/integrations.md "Slack app"): its bot token encrypted, its deliveries on one of the team's
-- webhooks, the threads its runs answer in, and the messages owed to those threads.

-- CreateTable
CREATE TABLE "SlackApp" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slackTeamId" TEXT NOT NULL,
    "botUserId" TEXT NOT NULL,
    "botTokenCiphertext" BYTEA NOT NULL,
    "botTokenKeyId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "environmentId" TEXT,
    "allowedChannels" TEXT[],
    "allowedUsers" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'active',
    "brokenReason" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SlackApp_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SlackThread" (
    "slackAppId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "threadTs" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SlackThread_pkey" PRIMARY KEY ("slackAppId","channel","threadTs")
);

-- CreateTable
CREATE TABLE "SlackPost" (
    "id" BIGSERIAL NOT NULL,
    "slackAppId" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SlackPost_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "SlackApp_webhookId_key" ON "SlackApp"("webhookId");

-- CreateIndex
CREATE UNIQUE INDEX "SlackApp_teamId_name_key" ON "SlackApp"("teamId", "name");

-- CreateIndex
CREATE INDEX "SlackThread_runId_idx" ON "SlackThread"("runId");

-- CreateIndex
CREATE INDEX "SlackPost_nextAttemptAt_id_idx" ON "SlackPost"("nextAttemptAt", "id");

-- CreateIndex
CREATE INDEX "SlackPost_runId_id_idx" ON "SlackPost"("runId", "id");

-- AddForeignKey
ALTER TABLE "SlackApp" ADD CONSTRAINT "SlackApp_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SlackApp" ADD CONSTRAINT "SlackApp_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SlackThread" ADD CONSTRAINT "SlackThread_slackAppId_fkey" FOREIGN KEY ("slackAppId") REFERENCES "SlackApp"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SlackPost" ADD CONSTRAINT "SlackPost_slackAppId_fkey" FOREIGN KEY ("slackAppId") REFERENCES "SlackApp"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The messages a Slack app's run owes its thread are written by the state change they report, in the same
-- transaction (as outbound events are, 20261125200000_event_endpoints): whichever code path moved the run (a claim,
-- a completion, a follow-up, the lost-runner sweep), its message exists exactly when the change committed, and a
-- crash or a Slack outage only delays it. Only runs a Slack app started carry `slack_app_id` in their metadata; an
-- app that is broken or gone is owed nothing. `slack_posts` wakes the posters; a lost notification waits for a poll.
CREATE FUNCTION "record_slack_post"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  app_id TEXT;
BEGIN
  IF NEW.data ->> 'to' NOT IN ('QUEUED', 'INPROGRESS', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED') THEN
    RETURN NULL;
  END IF;
  SELECT r.metadata ->> 'slack_app_id' INTO app_id FROM "Run" r WHERE r.id = NEW."runId";
  IF app_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO "SlackPost" ("slackAppId", "runId", "state")
  SELECT a.id, NEW."runId", NEW.data ->> 'to' FROM "SlackApp" a WHERE a.id = app_id AND a.status = 'active';
  IF FOUND THEN
    PERFORM pg_notify('slack_posts', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "RunEvent_slack_post" AFTER INSERT ON "RunEvent" FOR EACH ROW
  WHEN (NEW.kind = 'state_changed')
  EXECUTE FUNCTION "record_slack_post"();
