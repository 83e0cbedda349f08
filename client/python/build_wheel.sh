#!/usr/bin/env bash
# Builds the Python library's wheel (client/python) offline and prints its path: from a copy of
# the package in WORK/src (so the source tree gets no build/ or egg-info), with Debian's
# python3-build and python3-setuptools and no build isolation (no index is used), into WORK/dist.
# Used by the test command (tests/run.sh) and by scripts/demo.sh.
#   build_wheel.sh WORK
set -euo pipefail
work=${1:?usage: build_wheel.sh WORK}
python=/usr/bin/python3  # Debian's, never a pyenv shim on PATH
package=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
rm -rf "$work/src" "$work/dist"
cp -r "$package" "$work/src"
rm -rf "$work/src/tests" "$work/src/build" "$work/src"/*.egg-info
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
(cd "$work/src" && "$python" -m build --wheel --no-isolation --outdir "$work/dist" > "$work/build.log" 2>&1) ||
  { cat "$work/build.log" >&2; echo "build_wheel: the wheel did not build" >&2; exit 1; }
ls "$work"/dist/pybox-*.whl
