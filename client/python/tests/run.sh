#!/usr/bin/env bash
# The Python library's test command (ctest `python`): builds the wheel from client/python into a
# fresh folder, installs it into a fresh venv made from Debian's /usr/bin/python3 (with the
# system site-packages, so Debian's cryptography, pytest and mypy are seen; nothing comes from
# an index: pip runs with --no-index --no-deps), checks the installed package and the tests with
# `mypy --strict`, and runs the pytest suite against the daemon of $PYBOX_HOME, importing pybox
# from the venv, never from the source tree.
#   PYBOX_HOME          the daemon to test against (ctest: the suite's fixture)
#   PYBOX_SOURCE        the source tree (common/api_errors.def, docs/python.md)
#   PYBOX_CLIENT        the C++ pybox, to compare with (else $PYBOX_BIN/pybox, else PATH)
#   PYBOX_PYTHON_BUILD  where to build (default: a fresh folder under /tmp, removed after)
# Extra arguments go to pytest.
set -euo pipefail
: "${PYBOX_HOME:?}" "${PYBOX_SOURCE:?}"
python=/usr/bin/python3  # Debian's, never a pyenv shim on PATH
here=$(cd "$(dirname "$0")" && pwd)
package=$(cd "$here/.." && pwd)
if [ -n "${PYBOX_PYTHON_BUILD:-}" ]; then
  work=$PYBOX_PYTHON_BUILD
  rm -rf "$work"
  mkdir -p "$work"
  cleanup() { :; }
else
  work=$(mktemp -d /tmp/pybox-python-XXXXXX)
  cleanup() { rm -rf "$work"; }
fi
trap cleanup EXIT
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

wheel=$("$package/build_wheel.sh" "$work")
echo "python tests: built $(basename "$wheel")"

"$python" -m venv --system-site-packages "$work/venv"
# --ignore-installed: a pybox that a user installed for the system python (scripts/demo.sh does)
# would otherwise satisfy pip through the system site-packages, and the venv would get nothing.
"$work/venv/bin/python" -m pip install --quiet --no-index --no-deps --ignore-installed "$wheel"
installed=$("$work/venv/bin/python" -c 'import os, pybox; print(os.path.dirname(pybox.__file__))')
case $installed in
  "$work/venv/"*) echo "python tests: pybox installed at $installed" ;;
  *) echo "python tests: pybox imports from $installed, not from the venv" >&2; exit 1 ;;
esac
[ -f "$installed/py.typed" ] || { echo "python tests: the wheel has no py.typed" >&2; exit 1; }

# mypy --strict on the package as installed (Debian's mypy, run by the venv's python so it sees it).
(cd "$work" && "$work/venv/bin/python" -m mypy --strict --no-incremental --cache-dir=/dev/null -p pybox)

# pytest from a folder outside the source tree, so `import pybox` finds the venv's.
cp -r "$here" "$work/tests"
find "$work/tests" -name __pycache__ -prune -exec rm -rf {} +
cd "$work/tests"
# The tests are typed too: they use the API as a typed caller would.
"$work/venv/bin/python" -m mypy --strict --no-incremental --cache-dir=/dev/null .
"$work/venv/bin/python" -m pytest -p no:cacheprovider -q -rs "$@" .
