#!/usr/bin/env bash
# ctest fixture cleanup: stops the registry registry_up.sh started (SIGTERM, then SIGKILL after
# 10 s) and removes its storage (the pushed images, hundreds of MB).
set -uo pipefail
: "${PYBOX_REGISTRY_DIR:?}"
pid_file="$PYBOX_REGISTRY_DIR/registry.pid"
[ -f "$pid_file" ] || exit 0
pid=$(cat "$pid_file")
if kill -0 "$pid" 2>/dev/null; then
  kill "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
fi
rm -f "$pid_file"
rm -rf "$PYBOX_REGISTRY_DIR/storage"
exit 0
