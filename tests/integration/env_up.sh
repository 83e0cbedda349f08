#!/usr/bin/env bash
# ctest fixture: starts the suite's own pyboxd and private engine in $PYBOX_HOME (never the
# user's), and builds the stdlib and data images from a copy of the recipes (only the stdlib
# image with PYBOX_FIXTURE_STDLIB_ONLY=1, which tests/soak/with_fixture.sh sets). If the Debian
# archive has moved past the pinned lock, the copy's lock is refreshed so the suite still runs.
#
# Built image tars are kept in $PYBOX_IMAGE_TAR_CACHE (default ~/.cache/pybox-test/image-tars,
# outside every test home, so it outlives CI runs) as NAME-<recipe SHA-256>.tar: the daemon
# imports such a tar instead of building only when the recipe SHA-256 (recipe, lock with every
# .deb SHA-256, builder version) is the same, so a changed recipe or lock always rebuilds.
set -euo pipefail
: "${PYBOX_HOME:?}" "${PYBOX_BIN:?}" "${PYBOX_SOURCE:?}"
export PYBOX_HOME
pybox="$PYBOX_BIN/pybox"

# A fresh runtime folder each time: the last run's env_down.sh removed its engine's state, so its
# images.json would name images the new engine does not hold.
"$(dirname "$0")/env_down.sh" || true
rm -rf "$PYBOX_HOME"
mkdir -p "$PYBOX_HOME"
chmod 700 "$PYBOX_HOME"
: > "$PYBOX_HOME/pyboxd.log"  # one suite run's log: scripts/test.sh reads it for sanitizer reports
recipes="$PYBOX_HOME-recipes"
rm -rf "$recipes"
cp -r "$PYBOX_SOURCE/images" "$recipes"
tar_cache="${PYBOX_IMAGE_TAR_CACHE:-$HOME/.cache/pybox-test/image-tars}"
mkdir -p "$tar_cache"
printf '{"recipes_dir": "%s", "image_tar_cache_dir": "%s"}\n' "$(cd "$recipes" && pwd)" \
  "$(cd "$tar_cache" && pwd)" > "$PYBOX_HOME/config.json"

"$PYBOX_BIN/pyboxd" >> "$PYBOX_HOME/pyboxd.log" 2>&1 &
for _ in $(seq 1 100); do
  [ -S "$PYBOX_HOME/pyboxd.sock" ] && break
  sleep 0.1
done
"$pybox" vm start
with_data=(--with data)
[ "${PYBOX_FIXTURE_STDLIB_ONLY:-0}" = 1 ] && with_data=()
if ! "$pybox" setup "${with_data[@]}" 2> "$PYBOX_HOME/setup.err"; then
  cat "$PYBOX_HOME/setup.err" >&2
  if grep -q -- "--refresh-lock" "$PYBOX_HOME/setup.err"; then
    echo "env_up: the pinned lock is outdated; refreshing the suite's copy" >&2
    "$pybox" setup --refresh-lock "${with_data[@]}"
  else
    exit 1
  fi
fi
"$pybox" vm status
