"""Calls every method of the official Python SDK (oz-agent-sdk, pinned in scripts/lib/python-tools.sh) against a
live Conveyor gateway and prints one JSON object: method name -> what the SDK returned (parsed into its own typed
models, so a shape the SDK cannot read fails here) or the error it raised. Driven by src/python-sdk.int.test.ts.

Inputs (environment): OZ_API_BASE_URL, WARP_API_KEY, and the IDs the driver prepared: HANDOFF_RUN_ID (ended run with
a handoff attachment), ARTIFACT_UID (a FILE artifact of it), LIVE_RUN_ID (a run still executing, to cancel).
"""
import json
import os

import oz_agent_sdk
from oz_agent_sdk import OzAPI

env = os.environ
client = OzAPI(api_key=env["WARP_API_KEY"], base_url=env["OZ_API_BASE_URL"], max_retries=0)
results = {}


def call(name, fn):
    try:
        value = fn()
        results[name] = {"ok": True, "value": value.model_dump(mode="json") if hasattr(value, "model_dump") else value}
    except oz_agent_sdk.APIStatusError as err:
        results[name] = {"ok": False, "status": err.status_code, "error": type(err).__name__, "body": err.body}
    return results[name].get("value")


handoff_run = env["HANDOFF_RUN_ID"]
call("agent.list", lambda: client.agent.list(sort_by="name"))
call("agent.list_environments", lambda: client.agent.list_environments(sort_by="name"))
call("agent.get_artifact", lambda: client.agent.get_artifact(env["ARTIFACT_UID"]))

created = call("agent.run", lambda: client.agent.run(prompt="from the Python SDK", title="python", metadata={"sdk": "python"}, team=True))
run_id = created["run_id"]
call("agent.runs.retrieve", lambda: client.agent.runs.retrieve(run_id))
call("agent.runs.list", lambda: [r.run_id for r in client.agent.runs.list(limit=2, source="API")])
call("agent.runs.submit_followup", lambda: client.agent.runs.submit_followup(run_id, message="and then this"))
call("agent.runs.cancel", lambda: client.agent.runs.cancel(env["LIVE_RUN_ID"]))
call("agent.runs.list_handoff_attachments", lambda: client.agent.runs.list_handoff_attachments(handoff_run))

ended = client.agent.runs.retrieve(handoff_run)
call("agent.sessions.check_redirect", lambda: client.agent.sessions.check_redirect(ended.session_id))
call("agent.conversations.check_redirect", lambda: client.agent.conversations.check_redirect(ended.conversation_id))

schedule = call(
    "agent.schedules.create",
    lambda: client.agent.schedules.create(name="py nightly", cron_schedule="0 3 * * *", prompt="nightly", enabled=True, metadata={"sdk": "python"}),
)
sid = schedule["id"]
call("agent.schedules.retrieve", lambda: client.agent.schedules.retrieve(sid))
call("agent.schedules.update", lambda: client.agent.schedules.update(sid, name="py nightly 2", cron_schedule="0 4 * * *", enabled=True, prompt="nightly"))
call("agent.schedules.list", lambda: client.agent.schedules.list())
call("agent.schedules.pause", lambda: client.agent.schedules.pause(sid))
call("agent.schedules.resume", lambda: client.agent.schedules.resume(sid))
call("agent.schedules.delete", lambda: client.agent.schedules.delete(sid))

agent = call("agent.agent.create", lambda: client.agent.agent.create(name="py-agent", description="made by the Python SDK", skills=[]))
uid = agent["uid"]
call("agent.agent.get", lambda: client.agent.agent.get(uid))
call("agent.agent.update", lambda: client.agent.agent.update(uid, description="updated"))
call("agent.agent.list", lambda: client.agent.agent.list())
call("agent.agent.delete", lambda: client.agent.agent.delete(uid))

print(json.dumps({"sdk_version": oz_agent_sdk.__version__, "results": results}))
