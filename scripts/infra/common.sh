# shellcheck shell=bash
# Helpers shared by the per-server files; sourced by scripts/infra.sh.

log() { printf '[infra] %s\n' "$*" >&2; }

die() {
  printf '[infra] ERROR: %s\n' "$*" >&2
  exit 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# Serialises `up`/`down`: two test runners calling `up` at once must not both initdb or start a broker.
# The lock lives as long as fd 9 is open, and children inherit it: every command that may leave a
# long-lived process behind (apt-get starting a service, pg_ctl, redis-server, java) runs with 9>&-,
# otherwise the servers would hold the lock forever and the next `up` or `down` would hang.
take_lock() {
  mkdir -p "$CONVEYOR_DATA_DIR"
  exec 9>"$CONVEYOR_DATA_DIR/.infra.lock"
  if ! flock -n 9; then
    log "another infra.sh is running; waiting for it..."
    flock 9
  fi
}

APT_UPDATED=0
APT_GET="$(dirname "${BASH_SOURCE[0]}")/../lib/apt-get-locked.sh"
# apt_install PACKAGE...: Debian packages, with a single `apt-get update` per run (fresh images have no lists).
apt_install() {
  local sudo=()
  if ! is_root; then
    command -v sudo >/dev/null || die "need root (or sudo) to apt-get install $*"
    sudo=(sudo)
  fi
  local apt_log="$CONVEYOR_DATA_DIR/apt.log"
  mkdir -p "$CONVEYOR_DATA_DIR"
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update (once per run)..."
    "${sudo[@]}" "$APT_GET" update >>"$apt_log" 2>&1 9>&- || apt_failed "apt-get update" "$apt_log"
    APT_UPDATED=1
  fi
  "${sudo[@]}" "$APT_GET" install -y --no-install-recommends "$@" \
    >>"$apt_log" 2>&1 9>&- || apt_failed "apt-get install $*" "$apt_log"
}

apt_failed() {
  tail -n 20 "$2" >&2
  die "$1 failed (full output: $2)"
}

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT. The subshell contains the failed
# redirection, and `timeout` guards against a connect that never completes.
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# pid_running PIDFILE PATTERN: the pid in PIDFILE is alive and its command line contains PATTERN
# (so a stale pid file whose number was reused by another process is not mistaken for our server).
pid_running() {
  local pid
  [[ -f $1 ]] || return 1
  read -r pid <"$1" || true # first line: postgres' postmaster.pid has more lines after the pid
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2"
}

# stop_pid NAME PIDFILE PATTERN GRACE_SECONDS: SIGTERM, wait up to GRACE_SECONDS, then SIGKILL.
stop_pid() {
  local name=$1 pidfile=$2 pattern=$3 grace=$4 pid waited=0
  if ! pid_running "$pidfile" "$pattern"; then
    log "$name: not running (nothing started by this script)"
    rm -f "$pidfile"
    return 0
  fi
  read -r pid <"$pidfile"
  log "$name: stopping pid $pid..."
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && ((waited < grace * 2)); do
    sleep 0.5
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name: still alive after ${grace}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  log "$name: stopped"
}

# status_line NAME STATE ADDRESS MANAGED VERSION: the `status` output format, one key=value record per line.
status_line() {
  printf '%-8s state=%-4s addr=%s managed=%s version=%s\n' "$1" "$2" "$3" "$4" "$5"
}
