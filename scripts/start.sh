#!/usr/bin/env bash
# `npm start`: the whole platform on this machine — infrastructure, migrations, every service, a dev API key.
# Ctrl-C stops every process this script started (and the infrastructure servers, if it started them).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/scripts/lib/bootstrap.sh"

GATEWAY_PORT="${PORT:-8080}"
INGRESS_PORT="${INGRESS_PORT:-8090}"
ORCH_HTTP_PORT="${ORCHESTRATOR_HTTP_PORT:-8081}"
RUNNER_HTTP_PORT="${RUNNER_HTTP_PORT:-8082}"
LOG_DIR="$ROOT/.conveyor/logs"

pids=()
infra_started_here=0

cleanup() {
  trap - INT TERM EXIT
  log "stopping services…"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$infra_started_here" = 1 ]; then
    log "stopping infrastructure started by this session…"
    bash "$ROOT/scripts/infra.sh" down || true
  fi
  log "stopped."
}
trap cleanup INT TERM EXIT

ensure_node_modules
if ! bash "$ROOT/scripts/infra.sh" status >/dev/null 2>&1; then infra_started_here=1; fi
ensure_infra
build_all
run_migrations
ensure_trust

mkdir -p "$LOG_DIR"
start_service() { # name, entry, env...
  local name=$1 entry=$2
  shift 2
  log "starting $name (logs: .conveyor/logs/$name.log)"
  # The log pipeline ignores Ctrl-C so it keeps draining while the service shuts down (a dead pipe would stall it).
  # Provider keys in this shell become dev team secrets (seed-dev below) and nothing else: no service inherits them.
  env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u GEMINI_API_KEY "$@" node "$ROOT/$entry" > >(trap '' INT TERM; tee "$LOG_DIR/$name.log" | sed -u "s/^/[$name] /" >&2) 2>&1 &
  pids+=($!)
}

wait_ready() { # name, url
  local name=$1 url=$2
  for _ in $(seq 1 120); do
    if curl -fsS "$url" >/dev/null 2>&1; then log "$name ready"; return 0; fi
    sleep 0.5
  done
  log "$name did not become ready at $url; see .conveyor/logs/$name.log"
  return 1
}

# Only the orchestrator holds the keys; every service gets its own certificate.
mapfile -t keys < <(grep -v '^#' "$ROOT/.conveyor/keys.env")
mapfile -t orchestrator_tls < <(tls_env orchestrator)
mapfile -t gateway_tls < <(tls_env gateway)
mapfile -t ingress_tls < <(tls_env ingress)
mapfile -t runner_tls < <(tls_env runner)
start_service orchestrator services/orchestrator/dist/main.js HTTP_PORT="$ORCH_HTTP_PORT" "${keys[@]}" "${orchestrator_tls[@]}"
wait_ready orchestrator "http://127.0.0.1:$ORCH_HTTP_PORT/readyz"
start_service gateway services/gateway/dist/main.js PORT="$GATEWAY_PORT" "${gateway_tls[@]}"
start_service ingress services/ingress/dist/main.js PORT="$INGRESS_PORT" "${ingress_tls[@]}"
start_service runner services/runner/dist/main.js HTTP_PORT="$RUNNER_HTTP_PORT" WORKSPACE_ROOT="$ROOT/.conveyor/workspaces" RUN_SANDBOX="${RUN_SANDBOX:-bubblewrap}" "${runner_tls[@]}"
wait_ready runner "http://127.0.0.1:$RUNNER_HTTP_PORT/readyz"
wait_ready gateway "http://127.0.0.1:$GATEWAY_PORT/readyz"
wait_ready ingress "http://127.0.0.1:$INGRESS_PORT/readyz"

# With the secrets key, so provider keys in this shell can be stored as dev team secrets.
seed_json="$(env "${keys[@]}" node "$ROOT/services/orchestrator/dist/cli/main.js" seed-dev)"
api_key="$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey)' "$seed_json")"
provider_secrets="$(node -e 'console.log(JSON.parse(process.argv[1]).providerSecrets.join(", ") || "none")' "$seed_json")"

cat >&2 <<MSG

  Conveyor is running.
    REST API     http://127.0.0.1:$GATEWAY_PORT/v1
    Console      http://127.0.0.1:$GATEWAY_PORT/console   (sign in with the key below)
    Webhooks     http://127.0.0.1:$INGRESS_PORT/webhooks/w/{webhook_uid}
    Workers      127.0.0.1:50052 (TLS; CA .conveyor/pki/ca.pem; see docs/workers.md)
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

  Press Ctrl-C to stop everything.

MSG

# Stop everything as soon as any service exits on its own.
wait -n "${pids[@]}" || true
log "a service exited; shutting down the rest"
