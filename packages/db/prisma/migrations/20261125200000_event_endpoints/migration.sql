-- Outgoing run events (docs/events.md): endpoints, the events, one delivery per event and endpoint, and its attempts.

-- CreateTable
CREATE TABLE "EventEndpoint" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "eventTypes" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabledReason" TEXT,
    "secretCiphertext" BYTEA NOT NULL,
    "secretKeyId" TEXT NOT NULL,
    "previousCiphertext" BYTEA,
    "previousKeyId" TEXT,
    "previousSecretUntil" TIMESTAMPTZ(3),
    "failingSince" TIMESTAMPTZ(3),
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EventEndpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OutboundEvent" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "body" TEXT,
    "occurredAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OutboundEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EventDelivery" (
    "id" BIGSERIAL NOT NULL,
    "eventId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EventDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EventDeliveryAttempt" (
    "id" BIGSERIAL NOT NULL,
    "deliveryId" BIGINT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "attemptedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "statusCode" INTEGER,
    "latencyMs" INTEGER NOT NULL,
    "error" TEXT,
    "nextAttemptAt" TIMESTAMPTZ(3),

    CONSTRAINT "EventDeliveryAttempt_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "EventEndpoint_teamId_idx" ON "EventEndpoint"("teamId");

-- CreateIndex
CREATE INDEX "OutboundEvent_runId_idx" ON "OutboundEvent"("runId");

-- CreateIndex
CREATE INDEX "EventDelivery_status_nextAttemptAt_idx" ON "EventDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "EventDelivery_endpointId_runId_id_idx" ON "EventDelivery"("endpointId", "runId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "EventDelivery_endpointId_eventId_key" ON "EventDelivery"("endpointId", "eventId");

-- CreateIndex
CREATE INDEX "EventDeliveryAttempt_endpointId_id_idx" ON "EventDeliveryAttempt"("endpointId", "id");

-- CreateIndex
CREATE INDEX "EventDeliveryAttempt_deliveryId_idx" ON "EventDeliveryAttempt"("deliveryId");

-- AddForeignKey
ALTER TABLE "EventEndpoint" ADD CONSTRAINT "EventEndpoint_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EventDelivery" ADD CONSTRAINT "EventDelivery_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "OutboundEvent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EventDelivery" ADD CONSTRAINT "EventDelivery_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "EventEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EventDeliveryAttempt" ADD CONSTRAINT "EventDeliveryAttempt_deliveryId_fkey" FOREIGN KEY ("deliveryId") REFERENCES "EventDelivery"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every state a run enters and every artifact it reports is a RunEvent row, whichever code path wrote it (insert-runs,
-- the state machine, report-events, report-artifact). This trigger turns the ones a team's enabled endpoints subscribe
-- to into an OutboundEvent and one EventDelivery per endpoint, in the same transaction: an event exists exactly when
-- its change committed. Nothing is written for a team without a matching endpoint. `outbound_events` wakes the
-- dispatchers; a lost notification only waits for their next poll.
CREATE FUNCTION "record_outbound_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type TEXT;
  team TEXT;
  event_id TEXT;
BEGIN
  IF NEW.kind = 'state_changed' THEN
    event_type := 'run.' || lower(NEW.data ->> 'to');
    IF event_type NOT IN ('run.queued', 'run.inprogress', 'run.succeeded', 'run.failed', 'run.error',
                          'run.cancelled', 'run.blocked') THEN
      RETURN NULL;
    END IF;
  ELSE
    event_type := 'run.artifact_reported';
  END IF;
  SELECT "teamId" INTO team FROM "Run" WHERE id = NEW."runId";
  IF NOT EXISTS (SELECT 1 FROM "EventEndpoint" e
                  WHERE e."teamId" = team AND e.enabled
                    AND (event_type = ANY(e."eventTypes") OR '*' = ANY(e."eventTypes"))) THEN
    RETURN NULL;
  END IF;
  event_id := 'msg_' || replace(gen_random_uuid()::text, '-', '');
  INSERT INTO "OutboundEvent" (id, "teamId", "runId", type, data, "occurredAt")
  VALUES (event_id, team, NEW."runId", event_type, NEW.data, NEW."createdAt");
  INSERT INTO "EventDelivery" ("eventId", "endpointId", "runId", "nextAttemptAt")
  SELECT event_id, e.id, NEW."runId", NEW."createdAt" FROM "EventEndpoint" e
   WHERE e."teamId" = team AND e.enabled
     AND (event_type = ANY(e."eventTypes") OR '*' = ANY(e."eventTypes"));
  PERFORM pg_notify('outbound_events', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "RunEvent_outbound_event" AFTER INSERT ON "RunEvent" FOR EACH ROW
  WHEN (NEW.kind IN ('state_changed', 'artifact'))
  EXECUTE FUNCTION "record_outbound_event"();
