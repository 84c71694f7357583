#!/usr/bin/env bash
# apt-get under one machine-wide lock, so `npm test` and `npm run test:kubernetes` running side by side (as .ci/run
# runs them) never fail on dpkg's or the package lists' lock held by the other. -o keeps the lock out of whatever
# apt-get leaves running (a service a package starts must not hold it).
set -euo pipefail
lock=/run/lock/conveyor-apt.lock
[ -d /run/lock ] || lock=/tmp/conveyor-apt.lock
exec flock -o -w 1800 "$lock" env DEBIAN_FRONTEND=noninteractive apt-get "$@"
