#!/usr/bin/env bash
# ctest fixture cleanup: stops the suite's private engine and pyboxd, then removes the engine's
# state folder (/var/lib/pybox/<engine key>: its images and layers, gigabytes over a few runs),
# once nothing is mounted under it. The key is daemon/vm/engine_process.cpp's engine_key: the
# first 16 hex digits of SHA-256 over the installation id, a NUL and the runtime folder.
set -uo pipefail
: "${PYBOX_HOME:?}" "${PYBOX_BIN:?}"
export PYBOX_HOME
state_dir=
if [ -f "$PYBOX_HOME/installation.json" ]; then
  installation=$(grep -o '"installation_id":"[0-9a-f]*"' "$PYBOX_HOME/installation.json" | cut -d'"' -f4)
  root=$(cd "$PYBOX_HOME" && pwd -P)
  [ -n "$installation" ] && state_dir=/var/lib/pybox/$(printf '%s\0%s' "$installation" "$root" | sha256sum | cut -c1-16)
fi
if [ -S "$PYBOX_HOME/pyboxd.sock" ]; then
  "$PYBOX_BIN/pybox" vm stop || true
fi
if [ -f "$PYBOX_HOME/pyboxd.pid" ]; then
  pid=$(cat "$PYBOX_HOME/pyboxd.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
fi
if [ -n "$state_dir" ] && [ -d "$state_dir" ]; then
  if grep -q " $state_dir/" /proc/self/mounts; then
    echo "env_down: $state_dir still has mounts; left in place" >&2
  else
    rm -rf "$state_dir"
  fi
fi
exit 0
