-- The gateway caches authenticated API keys (docs/service-trust.md, "The gateway's key cache"). Whatever changes
-- what a key authenticates as notifies `auth_changes` with the team's ID, whichever code path wrote it; the
-- orchestrators LISTEN and bump the team's epoch in Redis, which every cached key of that team is checked against.
-- An empty payload (TRUNCATE) means every team. The argument names the column holding the team's ID.
CREATE FUNCTION "notify_auth_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('auth_changes', '');
    RETURN NULL;
  END IF;
  -- A team moved (UPDATE of teamId) notifies both; PostgreSQL folds identical notifications of one transaction.
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM pg_notify('auth_changes', to_jsonb(OLD) ->> TG_ARGV[0]);
  END IF;
  IF TG_OP = 'UPDATE' THEN
    PERFORM pg_notify('auth_changes', to_jsonb(NEW) ->> TG_ARGV[0]);
  END IF;
  RETURN NULL;
END;
$$;

-- Any change but the orchestrator's own once-a-minute lastUsedAt stamp (revocation, expiry, deletion, owner).
-- New rows need no notification: the gateway never caches a failed authentication.
CREATE TRIGGER "ApiKey_auth_change" AFTER UPDATE ON "ApiKey" FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'lastUsedAt') IS DISTINCT FROM (to_jsonb(NEW) - 'lastUsedAt'))
  EXECUTE FUNCTION "notify_auth_change"('teamId');
CREATE TRIGGER "ApiKey_auth_delete" AFTER DELETE ON "ApiKey" FOR EACH ROW
  EXECUTE FUNCTION "notify_auth_change"('teamId');
-- Role, e-mail, display name, team, removal.
CREATE TRIGGER "User_auth_change" AFTER UPDATE OR DELETE ON "User" FOR EACH ROW
  EXECUTE FUNCTION "notify_auth_change"('teamId');
-- Name (the caller's display name), configuration, removal.
CREATE TRIGGER "AgentIdentity_auth_change" AFTER UPDATE OR DELETE ON "AgentIdentity" FOR EACH ROW
  EXECUTE FUNCTION "notify_auth_change"('teamId');
CREATE TRIGGER "Team_auth_change" AFTER UPDATE OR DELETE ON "Team" FOR EACH ROW
  EXECUTE FUNCTION "notify_auth_change"('id');
CREATE TRIGGER "ApiKey_auth_truncate" AFTER TRUNCATE ON "ApiKey" FOR EACH STATEMENT
  EXECUTE FUNCTION "notify_auth_change"();
CREATE TRIGGER "User_auth_truncate" AFTER TRUNCATE ON "User" FOR EACH STATEMENT
  EXECUTE FUNCTION "notify_auth_change"();
CREATE TRIGGER "AgentIdentity_auth_truncate" AFTER TRUNCATE ON "AgentIdentity" FOR EACH STATEMENT
  EXECUTE FUNCTION "notify_auth_change"();
CREATE TRIGGER "Team_auth_truncate" AFTER TRUNCATE ON "Team" FOR EACH STATEMENT
  EXECUTE FUNCTION "notify_auth_change"();
