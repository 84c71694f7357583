-- Live run views (docs/console.md): every recorded RunEvent wakes the orchestrators' WatchRunEvents streams.
-- The payload is only the run ID; watchers read the events themselves, so nothing is lost if a notification is
-- coalesced (PostgreSQL folds identical notifications of one transaction into one) or a listener reconnects.
CREATE FUNCTION "notify_run_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('run_events', NEW."runId"::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER "RunEvent_notify" AFTER INSERT ON "RunEvent" FOR EACH ROW EXECUTE FUNCTION "notify_run_event"();
