#!/usr/bin/env bash
# Local infrastructure for Conveyor on machines without a Docker engine: real PostgreSQL, Redis and a
# single-node Apache Kafka (KRaft) broker, all on 127.0.0.1, data under $CONVEYOR_DATA_DIR; plus Debian's
# chromium for the console's browser tests and the local run sandbox's tools (bubblewrap, socat).
#
#   scripts/infra.sh up       install what is missing, start what is not running (idempotent)
#   scripts/infra.sh status   one line per server; exit status 1 if any is down
#   scripts/infra.sh down     stop the servers this script started (servers it merely reused are left alone)
#   scripts/infra.sh stop S   stop one of them (S: postgres, redis or kafka); `up` starts it again
#   scripts/infra.sh browser  install Debian's chromium for the console's browser tests (idempotent)
#   scripts/infra.sh env      print the export lines for DATABASE_URL, REDIS_URL and KAFKA_BROKERS
#
# Settings (environment): PGPORT=5432 REDIS_PORT=6379 KAFKA_PORT=9092 KAFKA_CONTROLLER_PORT=9093
# CONVEYOR_DATA_DIR=<repo>/.conveyor. A server that already answers on its port is reused, not replaced.
# Progress goes to stderr prefixed with [infra]; stdout carries only `status` and `env` output.
set -euo pipefail

INFRA_SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$INFRA_SCRIPT_DIR/.." && pwd)"

PGPORT="${PGPORT:-5432}"
REDIS_PORT="${REDIS_PORT:-6379}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
CONVEYOR_DATA_DIR="${CONVEYOR_DATA_DIR:-$REPO_ROOT/.conveyor}"

# shellcheck source=SCRIPTDIR/infra/common.sh
source "$INFRA_SCRIPT_DIR/infra/common.sh"
# shellcheck source=SCRIPTDIR/infra/postgres.sh
source "$INFRA_SCRIPT_DIR/infra/postgres.sh"
# shellcheck source=SCRIPTDIR/infra/redis.sh
source "$INFRA_SCRIPT_DIR/infra/redis.sh"
# shellcheck source=SCRIPTDIR/infra/kafka.sh
source "$INFRA_SCRIPT_DIR/infra/kafka.sh"
# shellcheck source=SCRIPTDIR/infra/chromium.sh
source "$INFRA_SCRIPT_DIR/infra/chromium.sh"
# shellcheck source=SCRIPTDIR/infra/sandbox.sh
source "$INFRA_SCRIPT_DIR/infra/sandbox.sh"

usage() {
  sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
}

cmd_up() {
  local started=$SECONDS
  take_lock
  postgres_up
  redis_up
  kafka_up
  sandbox_up
  log "all servers up in $((SECONDS - started))s; run: eval \"\$(scripts/infra.sh env)\""
}

cmd_status() {
  local rc=0
  postgres_status || rc=1
  redis_status || rc=1
  kafka_status || rc=1
  sandbox_status || rc=1
  return "$rc"
}

cmd_down() {
  take_lock
  kafka_down
  redis_down
  postgres_down
}

cmd_env() {
  cat <<EOF
export DATABASE_URL=postgresql://conveyor:conveyor@127.0.0.1:$PGPORT/conveyor
export REDIS_URL=redis://127.0.0.1:$REDIS_PORT
export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT
EOF
}

case "${1:-}" in
  up) cmd_up ;;
  status) cmd_status ;;
  down) cmd_down ;;
  env) cmd_env ;;
  stop)
    take_lock
    case "${2:-}" in
      postgres | redis | kafka) "${2}_down" ;;
      *)
        usage
        exit 2
        ;;
    esac
    ;;
  browser)
    take_lock
    chromium_up
    ;;
  -h | --help | help) usage ;;
  *)
    usage
    exit 2
    ;;
esac
