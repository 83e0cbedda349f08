#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to the receipt of a real run: installs the
# packages, builds, starts pyboxd in the background, starts and checks the private engine,
# builds the stdlib image, and runs print(6*7). Uses ~/.pybox/runtime (or $PYBOX_HOME).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD_TARGETS="pyboxd pybox" ./scripts/build.sh
bin="$(pwd)/${BUILD_DIR:-build}/bin"
runtime=${PYBOX_HOME:-$HOME/.pybox/runtime}
if ! "$bin/pybox" version >/dev/null 2>&1; then
  mkdir -p "$runtime" && chmod 700 "$runtime"
  nohup "$bin/pyboxd" >> "$runtime/pyboxd.log" 2>&1 &
  # Wait for an answer, not for the socket file: a daemon that died leaves its socket behind.
  for _ in $(seq 1 100); do "$bin/pybox" version >/dev/null 2>&1 && break; sleep 0.1; done
fi
"$bin/pybox" vm start
"$bin/pybox" setup
echo 'print(6*7)' | "$bin/pybox" exec -
