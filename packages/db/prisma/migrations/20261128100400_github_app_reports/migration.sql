-- What a GitHub App's run owes GitHub (check runs, the answer to the comment that asked), queued as rows like the
-- Slack apps' posts (20261128000100_slack_apps): written with the state change they report, in the same transaction,
-- so a GitHub outage or an orchestrator restart delays them instead of losing them. And a Linear run's end report
-- (LinearReport run_ended), written the same way instead of after the completion committed.

-- CreateTable
CREATE TABLE "GitHubAppReport" (
    "id" BIGSERIAL NOT NULL,
    "githubAppId" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GitHubAppReport_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "GitHubAppReport_nextAttemptAt_id_idx" ON "GitHubAppReport"("nextAttemptAt", "id");

-- CreateIndex
CREATE INDEX "GitHubAppReport_runId_id_idx" ON "GitHubAppReport"("runId", "id");

-- AddForeignKey
ALTER TABLE "GitHubAppReport" ADD CONSTRAINT "GitHubAppReport_githubAppId_fkey" FOREIGN KEY ("githubAppId") REFERENCES "GitHubApp"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The App a run reports to: only a run the App's own webhook started (its source and `webhook_uid` are the platform's;
-- `github_app_id` alone is the caller's metadata), of an App that is not broken. Shared by the trigger below and the
-- orchestrator's report of a pushed commit (github-app-reports.ts).
CREATE FUNCTION "github_app_of_run"(run_id UUID) RETURNS TEXT LANGUAGE sql STABLE AS $$
  SELECT a.id
    FROM "Run" r JOIN "GitHubApp" a ON a.id = r.metadata ->> 'github_app_id'
   WHERE r.id = run_id AND r.source = 'GITHUB_WEBHOOK' AND a."webhookId" = r.metadata ->> 'webhook_uid'
     AND a."teamId" = r."teamId" AND a.status = 'active'
$$;

-- Such a run owes a check run when queued (on `github_head_sha`, a review's pull request head, else the default
-- branch's head), its move to in progress when claimed, and at its end the check's conclusion and the answer.
CREATE FUNCTION "record_github_app_report"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  app_id TEXT := "github_app_of_run"(NEW."runId");
  head_sha TEXT;
  state TEXT := NEW.data ->> 'to';
BEGIN
  IF app_id IS NULL THEN
    RETURN NULL;
  END IF;
  IF state = 'QUEUED' THEN
    SELECT r.metadata ->> 'github_head_sha' INTO head_sha FROM "Run" r WHERE r.id = NEW."runId";
    INSERT INTO "GitHubAppReport" ("githubAppId", "runId", kind, data)
    VALUES (app_id, NEW."runId", 'queued', jsonb_strip_nulls(jsonb_build_object('sha', head_sha)));
  ELSIF state = 'INPROGRESS' THEN
    INSERT INTO "GitHubAppReport" ("githubAppId", "runId", kind) VALUES (app_id, NEW."runId", 'started');
  ELSIF state IN ('SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED') THEN
    INSERT INTO "GitHubAppReport" ("githubAppId", "runId", kind, data)
    VALUES (app_id, NEW."runId", 'completed', jsonb_build_object('state', state)),
           (app_id, NEW."runId", 'answer', jsonb_build_object('execution', NEW.execution));
  ELSE
    RETURN NULL;
  END IF;
  PERFORM pg_notify('integration_reports', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "RunEvent_github_app_report" AFTER INSERT ON "RunEvent" FOR EACH ROW
  WHEN (NEW.kind = 'state_changed')
  EXECUTE FUNCTION "record_github_app_report"();

-- A Linear integration's run that ended owes its issue the outcome (once per execution), in the completion's own
-- transaction: an orchestrator stopped right after the completion committed used to lose it.
CREATE FUNCTION "record_linear_run_ended"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "LinearReport" ("integrationId", "runId", kind, "dedupeKey")
  SELECT i.id, r.id, 'run_ended', r.id::text || ':run_ended:' || NEW.execution
    FROM "Run" r JOIN "LinearIntegration" i ON i.id = r.metadata ->> 'linear_integration_id' AND i."teamId" = r."teamId"
   WHERE r.id = NEW."runId" AND r.source = 'LINEAR'
  ON CONFLICT ("dedupeKey") DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('integration_reports', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "RunEvent_linear_run_ended" AFTER INSERT ON "RunEvent" FOR EACH ROW
  WHEN (NEW.kind = 'state_changed' AND NEW.data ->> 'to' IN ('SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'))
  EXECUTE FUNCTION "record_linear_run_ended"();
