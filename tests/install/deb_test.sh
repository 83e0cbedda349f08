#!/usr/bin/env bash
# CI (scripts/test.sh): builds the .deb from a build folder, installs it with apt-get, and runs
# the seed page's first sealed run with the installed /usr/bin/pybox and /usr/bin/pyboxd only:
# the build folder is moved away meanwhile, the daemon has a private PYBOX_HOME under /tmp and
# its own private engine (`pybox vm start`), and the stdlib image comes from `pybox setup`
# (imported from the image tar cache the suite's fixture fills, when its recipe SHA-256 is
# there), and the installed Python library (/usr/lib/python3/dist-packages/pybox) prints 42
# with Debian's python3 through the same daemon. Everything it started is stopped and
# everything it made removed, the package and the engine's state folder included.
# Needs root.   Usage: tests/install/deb_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/sealed_run.sh"
source "$here/../support/fixture.sh"
build=$(cd "${1:?usage: deb_test.sh BUILD_DIR}" && pwd)
away=$build.moved-by-deb-test
[ ! -e "$away" ] || { echo "deb_test: $away exists (left by a killed run?); move it back to $build" >&2; exit 1; }
if dpkg-query -W -f='${Status}' pybox 2>/dev/null | grep -q "install ok installed"; then
  echo "deb_test: a pybox package is already installed; this test installs and removes its own" >&2
  exit 1
fi
started=$(date +%s)
work=$(mktemp -d /tmp/pybox-deb-XXXXXX)
export PYBOX_HOME=$work/home
pybox=/usr/bin/pybox
daemon_pid=
installed=no
fail() { echo "deb_test: $*" >&2; exit 1; }
cleanup() {
  if [ -n "$daemon_pid" ]; then
    "$pybox" vm stop > /dev/null 2>&1 || true
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  remove_engine_state "$PYBOX_HOME"
  if [ -d "$away" ] && [ ! -e "$build" ]; then mv "$away" "$build"; fi
  [ "$installed" = yes ] && dpkg -r pybox > /dev/null
  rm -rf "$work" || echo "deb_test: could not remove $work" >&2
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$work/package" > "$work/cpack.log") || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/package/pybox_*.deb)
echo "deb_test: $(basename "$deb"), $(stat -c %s "$deb") bytes; Depends: $(dpkg-deb -f "$deb" Depends)"
for dependency in adduser docker.io mmdebstrap socat libssh2-1 libboost-json; do
  dpkg-deb -f "$deb" Depends | grep -q "$dependency" || fail "the package does not depend on $dependency"
done

mv "$build" "$away"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=120 "$deb" > "$work/apt.log" ||
  { cat "$work/apt.log" >&2; fail "apt-get install failed"; }
installed=yes
[ "$(dpkg -L pybox | grep -c -x -e /usr/bin/pybox -e /usr/bin/pyboxd -e /usr/share/pybox/images/stdlib/recipe \
      -e /usr/lib/systemd/user/pyboxd.service -e /usr/lib/systemd/user/pyboxd.socket \
      -e /usr/lib/systemd/system/pyboxd.service -e /usr/lib/systemd/system/pyboxd.socket \
      -e /usr/lib/python3/dist-packages/pybox/__init__.py -e /usr/lib/python3/dist-packages/pybox/py.typed)" = 9 ] ||
  fail "the package does not hold the expected files"
grep -qx "ExecStart=/usr/bin/pyboxd" /usr/lib/systemd/user/pyboxd.service || fail "the unit does not start /usr/bin/pyboxd"
grep -qx "ExecStart=/usr/bin/pyboxd --system" /usr/lib/systemd/system/pyboxd.service ||
  fail "the system unit does not start /usr/bin/pyboxd --system"
# The postinst made the system group the system daemon's socket belongs to (it stays after removal).
getent group pybox > /dev/null || fail "the package's postinst did not create the group pybox"

line=$(/usr/bin/pyboxd --version)
version=${line#pyboxd }
mkdir -m 700 "$PYBOX_HOME"
tar_cache=${PYBOX_IMAGE_TAR_CACHE:-$HOME/.cache/pybox-test/image-tars}
mkdir -p "$tar_cache"
printf '{"image_tar_cache_dir": "%s"}\n' "$(cd "$tar_cache" && pwd)" > "$PYBOX_HOME/config.json"
/usr/bin/pyboxd >> "$PYBOX_HOME/pyboxd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 100); do [ -S "$PYBOX_HOME/pyboxd.sock" ] && break; sleep 0.1; done
[ -S "$PYBOX_HOME/pyboxd.sock" ] || { cat "$PYBOX_HOME/pyboxd.log" >&2; fail "/usr/bin/pyboxd did not start"; }
"$pybox" version
"$pybox" vm start
sealed_run
# The Python library, installed for the system python3, through the same daemon (PYBOX_HOME),
# run from / so that nothing of a source tree can be imported instead, writing no byte code
# under /usr (dpkg -r would leave it). Debian's python3 searches /usr/local/lib/python3.X/
# dist-packages (where pip installs as root: scripts/demo.sh does) before the packages' folder,
# so a pybox installed there would be imported instead: the checks leave the /usr/local folders
# out of sys.path, to import the package's own.
export PYTHONDONTWRITEBYTECODE=1
without_local='import sys; sys.path[:] = [p for p in sys.path if not p.startswith("/usr/local/")]'
python_out=$(cd / && /usr/bin/python3 -c "$without_local"'
import pybox; print(pybox.run("print(6*7)").stdout)')
[ "$python_out" = 42 ] || fail "/usr/bin/python3 -c 'import pybox; print(pybox.run(\"print(6*7)\").stdout)' printed '$python_out', not 42"
(cd / && /usr/bin/python3 -c "$without_local"'
import pybox; print(pybox.__file__)') | grep -qx /usr/lib/python3/dist-packages/pybox/__init__.py ||
  fail "python3 does not import pybox from /usr/lib/python3/dist-packages"
"$pybox" vm stop
echo "deb_test: /usr/bin/pybox and python3's pybox printed 42 with a receipt from pyboxd $version; $(( $(date +%s) - started )) s"
