#!/usr/bin/env bash
# ctest fixture cleanup: stops the suite's private engine and pyboxd.
set -uo pipefail
: "${PYBOX_HOME:?}" "${PYBOX_BIN:?}"
export PYBOX_HOME
if [ -S "$PYBOX_HOME/pyboxd.sock" ]; then
  "$PYBOX_BIN/pybox" vm stop || true
fi
if [ -f "$PYBOX_HOME/pyboxd.pid" ]; then
  pid=$(cat "$PYBOX_HOME/pyboxd.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
fi
exit 0
