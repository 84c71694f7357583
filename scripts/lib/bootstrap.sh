# Shared by start.sh and test.sh: everything a fresh clone needs before anything runs.
# Sourced, not executed; expects ROOT to be set.

log() { printf '\033[1;34m[conveyor]\033[0m %s\n' "$*" >&2; }

# shellcheck source=SCRIPTDIR/deploy-tools.sh
source "$ROOT/scripts/lib/deploy-tools.sh"
# shellcheck source=SCRIPTDIR/observability-tools.sh
source "$ROOT/scripts/lib/observability-tools.sh"
# shellcheck source=SCRIPTDIR/python-tools.sh
source "$ROOT/scripts/lib/python-tools.sh"

# The local run sandbox (RUN_SANDBOX=bubblewrap, the default) needs the runner to start as root: it forks a small
# privileged helper that gives every run its own uid, loop-mounted filesystem and network namespace, then drops to
# the unprivileged conveyor-runner account for everything else (docs/sandbox.md). Without root the runner would
# refuse to start and crash-loop under the supervisor, so refuse here, before anything starts, and say what to do.
# Agents never run unsandboxed unless asked for by name.
require_sandbox_privileges() {
  [ "${RUN_SANDBOX:-bubblewrap}" = bubblewrap ] || return 0
  [ "$(id -u)" -eq 0 ] && return 0
  cat >&2 <<EOF
[conveyor] npm start needs root for the run sandbox, and you are $(id -un).
  What needs root: only the runner's sandbox helper (per-run uids, loop-mounted workspaces, network namespaces);
  the runner drops to the unprivileged account conveyor-runner as soon as the helper is forked (docs/sandbox.md).
  Either run it as root, keeping your PATH (node) and environment:
    sudo --preserve-env env "PATH=\$PATH" npm start
  or, for development only, run agents WITHOUT isolation, as you, with full access to this machine:
    RUN_SANDBOX=none RUN_SANDBOX_NONE_ACKNOWLEDGED=runs-are-not-isolated npm start
EOF
  return 1
}

ensure_node_modules() {
  # Reinstall when package-lock.json changed since the last install (npm writes node_modules/.package-lock.json).
  if [ ! -d "$ROOT/node_modules" ] || [ "$ROOT/package-lock.json" -nt "$ROOT/node_modules/.package-lock.json" ]; then
    log "installing npm dependencies (first run takes a minute or two)…"
    # `npm install` rather than `npm ci`: it tolerates optional platform packages missing from the lock file.
    (cd "$ROOT" && npm install --no-audit --no-fund --loglevel=error)
  fi
}

ensure_infra() {
  log "starting PostgreSQL, Redis and Kafka (first run installs packages and downloads Kafka)…"
  bash "$ROOT/scripts/infra.sh" up
  eval "$(bash "$ROOT/scripts/infra.sh" env)"
}

ensure_browser() {
  log "checking for chromium (console browser tests)…"
  bash "$ROOT/scripts/infra.sh" browser
}

# The documentation's command blocks (tests/e2e docs-commands) call curl and jq, as a reader pasting them would.
ensure_doc_tools() {
  command -v curl >/dev/null && command -v jq >/dev/null && return 0
  log "installing curl and jq (the documentation test runs the docs' commands)…"
  "$ROOT/scripts/lib/apt-get-locked.sh" update -qq
  "$ROOT/scripts/lib/apt-get-locked.sh" install -y -qq --no-install-recommends curl jq >/dev/null
}

build_all() {
  log "building all workspaces…"
  (cd "$ROOT" && npx turbo run build --output-logs=errors-only)
}

# Dependencies and every workspace's dist/, unless the caller did both already (CONVEYOR_PREBUILT=1: .ci/run builds once
# for the two suites it runs side by side, so neither rewrites dist/ while the other reads it).
ensure_built() {
  if [ "${CONVEYOR_PREBUILT:-}" = 1 ]; then
    log "dependencies and build: done by the caller (CONVEYOR_PREBUILT=1)"
    return 0
  fi
  ensure_node_modules
  build_all
}

run_migrations() {
  log "applying database migrations…"
  node "$ROOT/packages/db/dist/migrate-cli.js"
}

# The installation's trust material (docs/service-trust.md), created on first run and kept: a CA and one
# certificate per service under $CONVEYOR_DATA_DIR/pki/ (reissued near expiry), and the signing/encryption keys in
# $CONVEYOR_DATA_DIR/keys.env (never regenerated: the secrets key decrypts stored data).
ensure_trust() {
  local cli="$ROOT/services/orchestrator/dist/cli/main.js" data="${CONVEYOR_DATA_DIR:-$ROOT/.conveyor}"
  log "checking the installation CA and service certificates (${data#"$ROOT/"}/pki/)…"
  node "$cli" pki init --dir "$data/pki" >/dev/null
  if [ ! -f "$data/keys.env" ]; then log "generating installation keys (${data#"$ROOT/"}/keys.env)…"; fi
  node "$cli" keys init --file "$data/keys.env" >/dev/null
}
