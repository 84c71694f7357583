# shellcheck shell=bash
# Chromium for the console's browser tests (tests/console): Debian's package, driven by puppeteer-core through
# CHROMIUM_PATH. No browser is ever downloaded by npm. Sourced by scripts/infra.sh.

CHROMIUM_BIN="${CHROMIUM_PATH:-/usr/bin/chromium}"

chromium_up() {
  if [[ -x $CHROMIUM_BIN ]]; then
    log "chromium: present at $CHROMIUM_BIN"
    return
  fi
  log "chromium: installing Debian's chromium via apt-get for the console browser tests (first run only)..."
  apt_install chromium fonts-dejavu-core
  [[ -x $CHROMIUM_BIN ]] || die "chromium: installed, but $CHROMIUM_BIN is missing"
  log "chromium: installed at $CHROMIUM_BIN"
}
