#!/usr/bin/env bash
# ctest fixture cleanup: stops the suite's private engine and pyboxd, then removes the engine's
# state folder (tests/support/fixture.sh).
set -uo pipefail
: "${PYBOX_HOME:?}" "${PYBOX_BIN:?}"
export PYBOX_HOME
source "$(dirname "$0")/../support/fixture.sh"
if [ -S "$PYBOX_HOME/pyboxd.sock" ]; then
  "$PYBOX_BIN/pybox" vm stop || true
fi
if [ -f "$PYBOX_HOME/pyboxd.pid" ]; then
  pid=$(cat "$PYBOX_HOME/pyboxd.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
fi
remove_engine_state "$PYBOX_HOME"
exit 0
