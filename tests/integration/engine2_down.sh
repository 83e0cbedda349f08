#!/usr/bin/env bash
# ctest fixture cleanup: removes the second engine's containers, stops its dockerd (SIGTERM,
# then SIGKILL after 15 s), unmounts what it left under $PYBOX_ENGINE2_DIR and removes its
# data-root and exec-root there (its images, gigabytes over a few runs).
set -uo pipefail
: "${PYBOX_ENGINE2_DIR:?}"
pid_file="$PYBOX_ENGINE2_DIR/dockerd.pid"
[ -f "$pid_file" ] || exit 0
pid=$(cat "$pid_file")
if kill -0 "$pid" 2>/dev/null; then
  kill "$pid"
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
fi
grep -o " $PYBOX_ENGINE2_DIR/[^ ]*" /proc/self/mounts | sort -r | while read -r mount; do umount -l "$mount" || true; done
rm -f "$pid_file"
grep -q " $PYBOX_ENGINE2_DIR/" /proc/self/mounts || rm -rf "$PYBOX_ENGINE2_DIR/data" "$PYBOX_ENGINE2_DIR/exec"
exit 0
