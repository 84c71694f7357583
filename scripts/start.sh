#!/usr/bin/env bash
# `npm start`: the whole platform on this machine — infrastructure, migrations, every service, a dev API key.
# The services run under scripts/lib/supervisor.js: one that exits is restarted with backoff while the others keep
# running, and the infrastructure is never stopped because a service died. Ctrl-C stops the services, then the
# infrastructure servers if this script started them.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/scripts/lib/bootstrap.sh"

export ROOT CONVEYOR_DATA_DIR="${CONVEYOR_DATA_DIR:-$ROOT/.conveyor}"
export GATEWAY_PORT="${PORT:-8080}"
export INGRESS_PORT="${INGRESS_PORT:-8090}"
export ORCH_HTTP_PORT="${ORCHESTRATOR_HTTP_PORT:-8081}"
export ORCH_GRPC_PORT="${ORCHESTRATOR_GRPC_PORT:-50051}"
export WORKER_GRPC_PORT="${WORKER_GRPC_PORT:-50052}"
export RUNNER_HTTP_PORT="${RUNNER_HTTP_PORT:-8082}"

supervisor_pid=""
infra_started_here=0

cleanup() {
  trap - INT TERM EXIT
  if [ -n "$supervisor_pid" ]; then
    log "stopping services…"
    kill -TERM "$supervisor_pid" 2>/dev/null || true
    wait "$supervisor_pid" 2>/dev/null || true
  fi
  if [ "$infra_started_here" = 1 ]; then
    log "stopping infrastructure started by this session…"
    bash "$ROOT/scripts/infra.sh" down || true
  fi
  log "stopped."
}
trap cleanup INT TERM EXIT

require_sandbox_privileges || exit 1
ensure_node_modules
if ! bash "$ROOT/scripts/infra.sh" status >/dev/null 2>&1; then infra_started_here=1; fi
ensure_infra
build_all
run_migrations
ensure_trust

log "starting the services under the supervisor (logs: ${CONVEYOR_DATA_DIR#"$ROOT/"}/logs/<service>.log)"
node "$ROOT/scripts/lib/platform-services.js" &
supervisor_pid=$!

wait_ready() { # name, url
  local name=$1 url=$2
  for _ in $(seq 1 240); do
    if curl -fsS "$url" >/dev/null 2>&1; then log "$name ready"; return 0; fi
    sleep 0.5
  done
  log "$name did not become ready at $url; see ${CONVEYOR_DATA_DIR#"$ROOT/"}/logs/$name.log"
  return 1
}
wait_ready orchestrator "http://127.0.0.1:$ORCH_HTTP_PORT/readyz"
wait_ready runner "http://127.0.0.1:$RUNNER_HTTP_PORT/readyz"
wait_ready gateway "http://127.0.0.1:$GATEWAY_PORT/readyz"
wait_ready ingress "http://127.0.0.1:$INGRESS_PORT/readyz"

# With the secrets key, so provider keys in this shell can be stored as dev team secrets.
mapfile -t keys < <(grep -v '^#' "$CONVEYOR_DATA_DIR/keys.env")
seed_json="$(env "${keys[@]}" node "$ROOT/services/orchestrator/dist/cli/main.js" seed-dev)"
api_key="$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey)' "$seed_json")"
provider_secrets="$(node -e 'console.log(JSON.parse(process.argv[1]).providerSecrets.join(", ") || "none")' "$seed_json")"

cat >&2 <<MSG

  Conveyor is running.
    REST API     http://127.0.0.1:$GATEWAY_PORT/v1
    Console      http://127.0.0.1:$GATEWAY_PORT/console   (sign in with the key below)
    Webhooks     http://127.0.0.1:$INGRESS_PORT/webhooks/w/{webhook_uid}
    Workers      127.0.0.1:$WORKER_GRPC_PORT (TLS; CA ${CONVEYOR_DATA_DIR#"$ROOT/"}/pki/ca.pem; see docs/workers.md)
    Dev API key  $api_key   (shown once; team "Dev Team", user dev@conveyor.local, admin)

  Try it:
    curl -H "Authorization: Bearer $api_key" http://127.0.0.1:$GATEWAY_PORT/v1/agent/runs

  Real coding agents (docs/harnesses.md): "harness": {"type": "claude" | "codex" | "gemini"} runs Claude Code, Codex
  or Gemini CLI with the team secret ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY (the provider key; it never
  enters the run's sandbox). Taken from this shell's environment as dev team secrets: $provider_secrets
  Add or replace one:
    curl -X PUT -H "Authorization: Bearer $api_key" -H 'Content-Type: application/json' \\
      -d '{"value": "<your Anthropic API key>"}' http://127.0.0.1:$GATEWAY_PORT/v1/secrets/ANTHROPIC_API_KEY
  Start a real run:
    curl -X POST -H "Authorization: Bearer $api_key" -H 'Content-Type: application/json' \\
      -d '{"prompt": "Write hello.py that prints hello", "config": {"harness": {"type": "claude"}}}' \\
      http://127.0.0.1:$GATEWAY_PORT/v1/agent/runs
  Model endpoints: ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL are passed to the runner's model proxy.

  A service that exits is restarted (with backoff; see the [supervisor] lines). Press Ctrl-C to stop everything.

MSG

# The supervisor runs until Ctrl-C; should it fail itself, stop everything rather than leave services unsupervised.
wait "$supervisor_pid" || true
supervisor_pid=""
log "the supervisor exited; shutting down"
