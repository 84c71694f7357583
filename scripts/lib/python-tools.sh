# shellcheck shell=bash
# Python tools the end-to-end tests drive: Schemathesis (fuzzes the live gateway from its OpenAPI document) and the
# official Python SDK (a second real client). Installed from PyPI into one venv per clone, `.conveyor/venv`,
# reinstalled only when the pins below change. Sourced; `log` comes from bootstrap.sh.

PYTHON_TOOLS=(schemathesis==4.32.5 oz-agent-sdk==0.15.0)
CONVEYOR_VENV="$ROOT/.conveyor/venv"
export CONVEYOR_VENV

ensure_python_tools() {
  local stamp="$CONVEYOR_VENV/.conveyor-tools" wanted="${PYTHON_TOOLS[*]}"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then return 0; fi
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    log "installing python3-venv (needed for the Python test tools)…"
    command -v apt-get >/dev/null || { log "ERROR: python3 with the venv module is required"; return 1; }
    "$ROOT/scripts/lib/apt-get-locked.sh" install -y -qq python3-venv >/dev/null
  fi
  log "installing Python test tools into .conveyor/venv: $wanted (first run only)…"
  rm -rf "$CONVEYOR_VENV"
  python3 -m venv "$CONVEYOR_VENV"
  "$CONVEYOR_VENV/bin/pip" install --quiet --disable-pip-version-check "${PYTHON_TOOLS[@]}"
  echo "$wanted" >"$stamp"
}
