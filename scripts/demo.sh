#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to the receipt of a real run: installs the
# packages, builds, starts pyboxd in the background, starts and checks the private engine,
# builds the stdlib image, and runs print(6*7). Uses ~/.pybox/runtime (or $PYBOX_HOME). It also
# installs the Python library (client/python, docs/python.md) for Debian's /usr/bin/python3, and
# for the python3 on $PATH when that is another, so that afterwards
#   python3 -c 'import pybox; print(pybox.run("print(6*7)").stdout)'
# prints 42 through the same daemon.
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
wheel_dir=$(mktemp -d)
trap 'rm -rf "$wheel_dir"' EXIT
wheel=$(client/python/build_wheel.sh "$wheel_dir")
pythons=(/usr/bin/python3)
on_path=$(command -v python3)
[ "$(readlink -f "$on_path")" = "$(readlink -f /usr/bin/python3)" ] || pythons+=("$on_path")
for python in "${pythons[@]}"; do
  # As root, Debian's pip installs into /usr/local/lib/python3.11/dist-packages.
  PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --no-index --no-deps --force-reinstall "$wheel"
done
echo "demo: the Python library is installed: python3 -c 'import pybox; print(pybox.run(\"print(6*7)\").stdout)'"
