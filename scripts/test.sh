#!/usr/bin/env bash
# `npm test`: provisions everything the tests need (dependencies, PostgreSQL, Redis, Kafka), builds, runs every
# workspace's tests (unit and integration) and prints one summary line.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/scripts/lib/bootstrap.sh"

ensure_built
ensure_deploy_tools
ensure_observability_tools
ensure_python_tools
ensure_infra
ensure_browser
ensure_doc_tools
log "integration tests run against these real servers:"
bash "$ROOT/scripts/infra.sh" status >&2

log "checking that generated gRPC types match protos/…"
(cd "$ROOT" && npm run --silent check-generated -w @conveyor/proto)

log "checking that services/gateway/openapi/openapi.json matches the gateway's schemas…"
(cd "$ROOT" && npm run --silent check-openapi -w @conveyor/gateway)

log "typechecking…"
(cd "$ROOT" && npx turbo run typecheck --output-logs=errors-only)

log "linting: type-aware ESLint (layers one way, no cycles, no service-to-service imports) and prettier --check…"
(cd "$ROOT" && npm run --silent lint)

log "running tests…"
find "$ROOT/packages" "$ROOT/services" "$ROOT/tests" -maxdepth 2 -name '.jest-results.json' -delete
status=0
(cd "$ROOT" && npx turbo run test --concurrency=1 --continue -- --json --outputFile=.jest-results.json) || status=$?

node "$ROOT/scripts/lib/summarize-jest.js" "$ROOT" || status=1
exit "$status"
