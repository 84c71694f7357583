# shellcheck shell=bash
# The local run sandbox's tools (docs/sandbox.md): bubblewrap (>= 0.8 for --disable-userns), socat (forwards the
# egress proxy and the platform's endpoints into each run's network namespace), setpriv/prlimit (util-linux),
# libseccomp's Python binding for Debian's python3 (the runs' seccomp filter is built with it at start), mkfs.ext4
# (e2fsprogs) and mount/umount for each run's own loop-mounted filesystem, and the runner's unprivileged account.
# Sourced by scripts/infra.sh.

sandbox_up() {
  local missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v socat >/dev/null || missing+=(socat)
  { command -v setpriv >/dev/null && command -v prlimit >/dev/null; } || missing+=(util-linux)
  command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
  { command -v mount >/dev/null && command -v umount >/dev/null; } || missing+=(mount)
  /usr/bin/python3 -c 'import seccomp' 2>/dev/null || missing+=(python3-seccomp)
  if ((${#missing[@]} > 0)); then
    log "sandbox: installing ${missing[*]} via apt-get (first run only)..."
    apt_install "${missing[@]}"
  fi
  # bubblewrap here is not setuid: it needs unprivileged user namespaces (Debian's switch, then the generic limit).
  if [[ $(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1) != 1 ]] ||
    [[ $(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 1) == 0 ]]; then
    log "sandbox: WARNING unprivileged user namespaces are disabled; runs will be refused (sysctl kernel.unprivileged_userns_clone=1)"
  fi
  # The runner drops to this account once it has forked its privileged helper (docs/sandbox.md).
  if id conveyor-runner >/dev/null 2>&1; then
    :
  elif is_root; then
    log "sandbox: creating the unprivileged runner account conveyor-runner"
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin conveyor-runner
  else
    # Only a runner started as root uses it, and that start creates it (npm start refuses the sandbox without root).
    log "sandbox: no account conveyor-runner yet; created by the first start as root"
  fi
  [[ -e /dev/loop-control ]] ||
    log "sandbox: WARNING no /dev/loop-control; runs' filesystems cannot be mounted and runs will be refused (modprobe loop)"
  log "sandbox: $(bwrap --version), socat $(socat -V 2>/dev/null | sed -n 's/^socat version \([^ ]*\).*/\1/p')"
}

sandbox_status() {
  if command -v bwrap >/dev/null && command -v socat >/dev/null && /usr/bin/python3 -c 'import seccomp' 2>/dev/null; then
    echo "sandbox  state=up   tools=bubblewrap,socat,python3-seccomp"
  else
    echo "sandbox  state=down (bubblewrap, socat or python3-seccomp missing; scripts/infra.sh up installs them)"
    return 1
  fi
}
