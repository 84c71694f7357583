-- Run-scoped keys (ApiKey.runId set) are never in the gateway's key cache, and one is revoked at the end of every run:
-- notifying those changes made each finished run empty its team's cache. Only keys that can be cached notify now.
DROP TRIGGER "ApiKey_auth_change" ON "ApiKey";
DROP TRIGGER "ApiKey_auth_delete" ON "ApiKey";
CREATE TRIGGER "ApiKey_auth_change" AFTER UPDATE ON "ApiKey" FOR EACH ROW
  WHEN ((OLD."runId" IS NULL OR NEW."runId" IS NULL)
        AND (to_jsonb(OLD) - 'lastUsedAt') IS DISTINCT FROM (to_jsonb(NEW) - 'lastUsedAt'))
  EXECUTE FUNCTION "notify_auth_change"('teamId');
CREATE TRIGGER "ApiKey_auth_delete" AFTER DELETE ON "ApiKey" FOR EACH ROW
  WHEN (OLD."runId" IS NULL)
  EXECUTE FUNCTION "notify_auth_change"('teamId');
