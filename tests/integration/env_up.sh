#!/usr/bin/env bash
# ctest fixture: starts the suite's own pyboxd and private engine in $PYBOX_HOME (never the
# user's), and builds the stdlib image from a copy of the recipes. If the Debian archive has
# moved past the pinned lock, the copy's lock is refreshed so the suite still runs.
set -euo pipefail
: "${PYBOX_HOME:?}" "${PYBOX_BIN:?}" "${PYBOX_SOURCE:?}"
export PYBOX_HOME
pybox="$PYBOX_BIN/pybox"

"$(dirname "$0")/env_down.sh" || true
mkdir -p "$PYBOX_HOME"
chmod 700 "$PYBOX_HOME"
: > "$PYBOX_HOME/pyboxd.log"  # one suite run's log: scripts/test.sh reads it for sanitizer reports
recipes="$PYBOX_HOME-recipes"
rm -rf "$recipes"
cp -r "$PYBOX_SOURCE/images" "$recipes"
printf '{"recipes_dir": "%s"}\n' "$(cd "$recipes" && pwd)" > "$PYBOX_HOME/config.json"

"$PYBOX_BIN/pyboxd" >> "$PYBOX_HOME/pyboxd.log" 2>&1 &
for _ in $(seq 1 100); do
  [ -S "$PYBOX_HOME/pyboxd.sock" ] && break
  sleep 0.1
done
"$pybox" vm start
if ! "$pybox" setup 2> "$PYBOX_HOME/setup.err"; then
  cat "$PYBOX_HOME/setup.err" >&2
  if grep -q -- "--refresh-lock" "$PYBOX_HOME/setup.err"; then
    echo "env_up: the pinned lock is outdated; refreshing the suite's copy" >&2
    "$pybox" setup --refresh-lock
  else
    exit 1
  fi
fi
"$pybox" vm status
