# shellcheck shell=bash
# Redis: reuse a server answering PING on 127.0.0.1:$REDIS_PORT, or start our own from the Debian package.
# Sourced by scripts/infra.sh.

REDIS_DIR="$CONVEYOR_DATA_DIR/redis"
REDIS_PIDFILE="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"

# redis_cmd COMMAND: send one inline command over bash's /dev/tcp (no redis-cli needed, and it works before
# anything is installed) and print the reply lines without their CRs. The trailing QUIT makes the server
# close the connection, which ends the read.
redis_cmd() {
  # shellcheck disable=SC2016 # $1/$2 belong to the inner shell
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "%s\r\nQUIT\r\n" "$2" >&3 && cat <&3' \
    _ "$REDIS_PORT" "$1" 2>/dev/null | tr -d '\r'
}

redis_ping() {
  local reply
  reply="$(redis_cmd PING)" || return 1
  [[ ${reply%%$'\n'*} == "+PONG" ]]
}

redis_owned_running() { pid_running "$REDIS_PIDFILE" redis-server; }

redis_up() {
  if redis_ping; then
    if redis_owned_running; then
      log "redis: already running (ours) on 127.0.0.1:$REDIS_PORT"
    else
      log "redis: something already answers PING on 127.0.0.1:$REDIS_PORT; reusing it"
    fi
    return
  fi
  port_open "$REDIS_PORT" && die "redis: 127.0.0.1:$REDIS_PORT is taken by something that does not answer PING (password-protected Redis?); set REDIS_PORT"

  if ! command -v redis-server >/dev/null; then
    log "redis: installing redis-server via apt-get (first run only)..."
    apt_install redis-server
    # Where services may start, the package has just started its own server on the default port.
    if redis_ping; then
      log "redis: the redis-server package started its own server on 127.0.0.1:$REDIS_PORT; reusing it"
      return
    fi
  fi

  log "redis: starting on 127.0.0.1:$REDIS_PORT (log: $REDIS_LOG)..."
  mkdir -p "$REDIS_DIR"
  # Persistent like a production Redis must be (deploy/README.md): the append-only file, fsynced every second, so a
  # restart keeps queued runs; no RDB snapshots besides. noeviction: BullMQ breaks if Redis evicts its keys.
  # --daemonize forks into its own session, detached from the caller.
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes \
    --dir "$REDIS_DIR" --pidfile "$REDIS_PIDFILE" --logfile "$REDIS_LOG" \
    --save '' --appendonly yes --appendfsync everysec --maxmemory-policy noeviction 9>&-
  local waited=0
  until redis_ping; do
    if ((waited >= 40)); then
      tail -n 20 "$REDIS_LOG" >&2 || true
      die "redis: no PONG on 127.0.0.1:$REDIS_PORT after 20s (log: $REDIS_LOG)"
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  log "redis: ready on 127.0.0.1:$REDIS_PORT"
}

redis_status() {
  local managed=no version
  redis_owned_running && managed=yes
  if ! redis_ping; then
    status_line redis down "127.0.0.1:$REDIS_PORT" "$managed" -
    return 1
  fi
  version="$(redis_cmd 'INFO server' | sed -n 's/^redis_version://p')" || true
  status_line redis up "127.0.0.1:$REDIS_PORT" "$managed" "${version:-unknown}"
}

# SIGTERM is Redis' graceful shutdown: it fsyncs the append-only file, which the next `up` loads.
redis_down() { stop_pid redis "$REDIS_PIDFILE" redis-server 10; }
