# shellcheck shell=bash
# PostgreSQL: reuse a server answering on 127.0.0.1:$PGPORT, or run our own cluster from the Debian binaries.
# Sourced by scripts/infra.sh.

PG_DIR="$CONVEYOR_DATA_DIR/postgres"
PG_DATA="$PG_DIR/data"
PG_LOG="$PG_DIR/postgres.log"
PG_PIDFILE="$PG_DATA/postmaster.pid"

# Directory holding initdb/pg_ctl: the major version an existing cluster was made with, else the newest
# Debian install, else whatever is on PATH. Prints nothing when PostgreSQL is not installed.
pg_bindir() {
  local dir
  if [[ -f $PG_DATA/PG_VERSION ]]; then
    dir="/usr/lib/postgresql/$(<"$PG_DATA/PG_VERSION")/bin"
    [[ -x $dir/pg_ctl ]] && { echo "$dir"; return; }
  fi
  dir="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)"
  if [[ -n $dir && -x $dir/initdb && -x $dir/pg_ctl ]]; then
    echo "$dir"
  elif command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
    dirname "$(command -v pg_ctl)"
  fi
}

# PostgreSQL refuses to run as root, so as root our cluster belongs to the `postgres` OS user.
pg_as_owner() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

pg_ready() {
  if command -v pg_isready >/dev/null; then
    pg_isready -q -h 127.0.0.1 -p "$PGPORT" -t 3
  else
    port_open "$PGPORT"
  fi
}

pg_owned_running() { pid_running "$PG_PIDFILE" "$PG_DATA"; }

# Every psql below runs quietly: no psqlrc, no password prompt, no NOTICEs ("extension already exists").
export PGOPTIONS="-c client_min_messages=warning"

# psql as the application role over TCP, i.e. exactly what DATABASE_URL does.
pg_psql_conveyor() {
  PGPASSWORD=conveyor PGCONNECT_TIMEOUT=5 psql -X -q -w -tA -v ON_ERROR_STOP=1 \
    -h 127.0.0.1 -p "$PGPORT" -U conveyor "$@"
}

postgres_up() {
  if pg_owned_running; then
    local port
    port="$(sed -n 4p "$PG_PIDFILE")"
    [[ $port == "$PGPORT" ]] || die "postgres: our cluster runs on port $port, not PGPORT=$PGPORT; run 'down' first"
    log "postgres: already running (ours) on 127.0.0.1:$PGPORT"
    pg_ensure_objects pg_psql_conveyor
    return
  fi
  if pg_ready; then
    pg_reuse
    return
  fi

  pg_ensure_binaries
  # Installing the Debian package may have started its own cluster on this port (where services may start).
  if pg_ready; then
    pg_reuse
    return
  fi
  [[ -f $PG_DATA/PG_VERSION ]] || pg_init_cluster
  pg_start
  pg_ensure_objects pg_psql_conveyor
}

pg_ensure_binaries() {
  local bin
  if [[ -z $(pg_bindir) ]]; then
    log "postgres: installing postgresql via apt-get (first run only)..."
    apt_install postgresql
  fi
  bin="$(pg_bindir)"
  [[ -n $bin ]] || die "postgres: initdb/pg_ctl still not found after installing postgresql"
  if [[ ! -f $("$bin/pg_config" --sharedir)/extension/pg_trgm.control ]]; then
    log "postgres: pg_trgm missing; installing postgresql-contrib via apt-get..."
    apt_install postgresql-contrib
  fi
}

pg_init_cluster() {
  local bin pwfile
  bin="$(pg_bindir)"
  log "postgres: initdb $PG_DATA (first run only)..."
  mkdir -p "$PG_DIR"
  if is_root; then
    id postgres >/dev/null 2>&1 || die "postgres: running as root needs the 'postgres' OS user (it comes with the postgresql package)"
    chown postgres:postgres "$PG_DIR"
    runuser -u postgres -- test -w "$PG_DIR" \
      || die "postgres: the 'postgres' OS user cannot reach $PG_DIR (a parent directory is not traversable); set CONVEYOR_DATA_DIR to a path it can reach"
  fi
  # The bootstrap superuser is the application role itself, with its password set from a file
  # (never on a command line). Explicit encoding/locale: an unset LANG would otherwise give SQL_ASCII.
  pwfile="$PG_DIR/.pwfile"
  (umask 077 && echo conveyor >"$pwfile")
  is_root && chown postgres:postgres "$pwfile"
  if ! pg_as_owner "$bin/initdb" -D "$PG_DATA" -U conveyor --pwfile="$pwfile" \
    --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >"$PG_DIR/initdb.log" 2>&1; then
    rm -f "$pwfile"
    tail -n 20 "$PG_DIR/initdb.log" >&2
    die "postgres: initdb failed (full output: $PG_DIR/initdb.log)"
  fi
  rm -f "$pwfile"
}

pg_start() {
  local bin
  bin="$(pg_bindir)"
  log "postgres: starting on 127.0.0.1:$PGPORT (log: $PG_LOG)..."
  # Settings given at start so a changed PGPORT applies without touching the cluster. No Unix socket:
  # everything connects over TCP, and socket paths under a deep repo directory can exceed the 107-byte limit.
  # setsid: the server gets its own session, so signals to the caller's process group (Ctrl-C, a CI step
  # ending) do not take it down; -w makes setsid wait for pg_ctl, which itself waits for readiness.
  if ! pg_as_owner setsid -w "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$PGPORT -c unix_socket_directories=''" start >/dev/null 9>&-; then
    tail -n 20 "$PG_LOG" >&2 || true
    die "postgres: failed to start (log: $PG_LOG)"
  fi
  log "postgres: ready on 127.0.0.1:$PGPORT"
}

# A server we did not start: make the role/database/extension exist if we can act as a superuser there,
# otherwise only report whether DATABASE_URL works.
pg_reuse() {
  log "postgres: something already answers on 127.0.0.1:$PGPORT; reusing it"
  command -v psql >/dev/null || apt_install postgresql-client
  if pg_su_conveyor; then
    pg_ensure_objects pg_psql_conveyor
  elif is_root && pg_su_peer -c 'SELECT 1' >/dev/null 2>&1; then
    pg_ensure_objects pg_su_peer
  elif pg_su_trust -c 'SELECT 1' >/dev/null 2>&1; then
    pg_ensure_objects pg_su_trust
  else
    log "postgres: cannot connect there as a superuser; not checking role/database"
  fi
  pg_psql_conveyor -d conveyor -c 'SELECT 1' >/dev/null 2>&1 \
    || log "postgres: WARNING: DATABASE_URL (conveyor/conveyor@127.0.0.1:$PGPORT/conveyor) does not work on that server"
}

pg_su_conveyor() {
  [[ $(pg_psql_conveyor -d postgres -c 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user' 2>/dev/null) == t ]]
}
# The Debian cluster's `postgres` role through peer authentication on its default socket.
pg_su_peer() { (cd / && runuser -u postgres -- psql -X -q -w -tA -v ON_ERROR_STOP=1 -p "$PGPORT" "$@"); }
pg_su_trust() { PGCONNECT_TIMEOUT=5 psql -X -q -w -tA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres "$@"; }

# pg_ensure_objects PSQL_FUNCTION: superuser role conveyor/conveyor, database conveyor, extension pg_trgm.
pg_ensure_objects() {
  local psql_su=$1
  "$psql_su" -d postgres -c "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'conveyor') THEN
        CREATE ROLE conveyor LOGIN SUPERUSER PASSWORD 'conveyor';
      END IF;
    END \$\$;" >/dev/null
  if [[ $("$psql_su" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'conveyor'") != 1 ]]; then
    log "postgres: creating database conveyor"
    "$psql_su" -d postgres -c 'CREATE DATABASE conveyor OWNER conveyor' >/dev/null
  fi
  "$psql_su" -d conveyor -c 'CREATE EXTENSION IF NOT EXISTS pg_trgm' >/dev/null \
    || die "postgres: CREATE EXTENSION pg_trgm failed in database conveyor"
}

postgres_status() {
  local managed=no version
  pg_owned_running && managed=yes
  if ! pg_ready; then
    status_line postgres down "127.0.0.1:$PGPORT" "$managed" -
    return 1
  fi
  # "PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64-pc-linux-gnu, ..." -> 15.14
  version="$(pg_psql_conveyor -d conveyor -c 'SELECT version()' 2>/dev/null | awk '{print $2}')" || true
  status_line postgres up "127.0.0.1:$PGPORT" "$managed" "${version:-unknown}"
}

postgres_down() {
  if ! pg_owned_running; then
    log "postgres: not running (nothing started by this script)"
    return 0
  fi
  log "postgres: stopping (pg_ctl stop -m fast)..."
  pg_as_owner "$(pg_bindir)/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null
  log "postgres: stopped"
}
