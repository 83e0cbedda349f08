#!/usr/bin/env bash
# ctest install_layout: `cmake --install` into a temporary prefix, then the build tree is moved
# away (so nothing in it can be found) and only the installed programs are run: their versions,
# the seed page's first sealed run on the suite's engine (the daemon reads the installed
# recipes), and a missing data folder, which must stop pyboxd with the path it looked at.
# The build tree is put back on exit, whatever happened.
#   PYBOX_BUILD          the build folder to install from
#   PYBOX_SOURCE         the source tree (must not be named by the installed programs)
#   PYBOX_ENGINE_SOCKET  the suite fixture's engine
set -euo pipefail
: "${PYBOX_BUILD:?}" "${PYBOX_SOURCE:?}" "${PYBOX_ENGINE_SOCKET:?}"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/sealed_run.sh"
build=$(cd "$PYBOX_BUILD" && pwd)
away=$build.moved-by-install-test
if [ -e "$away" ]; then
  echo "install_layout: $away exists (left by a killed run of this test?); move it back to $build" >&2
  exit 1
fi
work=$(mktemp -d /tmp/pybox-install-XXXXXX)
prefix=$work/prefix
export PYBOX_HOME=$work/home
daemon_pid=
fail() { echo "install_layout: $*" >&2; exit 1; }
stop_daemon() {
  [ -n "$daemon_pid" ] || return 0
  kill "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=
}
cleanup() {
  stop_daemon
  if [ -d "$away" ] && [ ! -e "$build" ]; then mv "$away" "$build"; fi
  # A sanitizer build's daemon reports into its log, not into this test's output.
  local reported=no
  if grep -q -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$PYBOX_HOME/pyboxd.log" 2>/dev/null; then
    cat "$PYBOX_HOME/pyboxd.log" >&2
    reported=yes
  fi
  rm -rf "$work"
  if [ "$reported" = yes ]; then echo "install_layout: the installed pyboxd reported an error (above)" >&2; exit 1; fi
}
trap cleanup EXIT
start_daemon() {
  "$prefix/bin/pyboxd" >> "$PYBOX_HOME/pyboxd.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 100); do [ -S "$PYBOX_HOME/pyboxd.sock" ] && return 0; sleep 0.1; done
  cat "$PYBOX_HOME/pyboxd.log" >&2
  fail "the installed pyboxd did not open $PYBOX_HOME/pyboxd.sock"
}

cmake --install "$build" --prefix "$prefix" --strip > "$work/install.log"
for file in bin/pyboxd bin/pybox share/pybox/images/stdlib/recipe share/pybox/images/stdlib/lock \
            share/pybox/images/data/recipe share/pybox/images/data/lock share/pybox/seccomp/pybox-seccomp-v2.json \
            share/doc/pybox/README.md share/doc/pybox/docs/install.md lib/systemd/user/pyboxd.service \
            lib/python3/dist-packages/pybox/__init__.py lib/python3/dist-packages/pybox/py.typed; do
  [ -f "$prefix/$file" ] || fail "cmake --install did not install $file"
done
grep -qx "ExecStart=$prefix/bin/pyboxd" "$prefix/lib/systemd/user/pyboxd.service" ||
  fail "the installed unit does not start $prefix/bin/pyboxd"
cmp -s "$prefix/share/pybox/seccomp/pybox-seccomp-v2.json" "$PYBOX_SOURCE/proto/seccomp/pybox-seccomp-v2.json" ||
  fail "the installed seccomp profile differs from the one compiled in"
# No path of the source or build tree (which lies under it or beside it) is in the programs.
for program in pyboxd pybox; do
  for tree in "$PYBOX_SOURCE" "$build"; do
    ! grep -q -F "$tree" "$prefix/bin/$program" || fail "the installed $program names $tree"
  done
done

mv "$build" "$away"

line=$("$prefix/bin/pyboxd" --version)
version=${line#pyboxd }
[[ $line =~ ^pyboxd\ [0-9]+\.[0-9]+\.[0-9]+\+([0-9a-f]{7}(-dirty)?|unknown)$ ]] ||
  fail "pyboxd --version printed '$line'"

mkdir -m 700 "$PYBOX_HOME"
tar_cache=${PYBOX_IMAGE_TAR_CACHE:-$HOME/.cache/pybox-test/image-tars}
mkdir -p "$tar_cache"
printf '{"engine_socket": "%s", "image_tar_cache_dir": "%s"}\n' "$PYBOX_ENGINE_SOCKET" "$(cd "$tar_cache" && pwd)" \
  > "$PYBOX_HOME/config.json"
start_daemon
pybox=$prefix/bin/pybox
versions=$("$pybox" version)
[[ $versions == "pybox $version (API "*$'\n'"pyboxd $version (API "* ]] || fail "pybox version printed: $versions"
sealed_run
stop_daemon

# Without its data folder, the installed pyboxd refuses to start and names the path it tried.
mv "$prefix/share/pybox" "$prefix/share/pybox.hidden"
rm -f "$PYBOX_HOME/pyboxd.sock"
status=0
"$prefix/bin/pyboxd" 2> "$work/missing.err" || status=$?
[ "$status" = 1 ] || fail "pyboxd without its data folder exited with $status"
grep -q -F "$prefix/share/pybox/images" "$work/missing.err" || fail "the error does not name the path: $(cat "$work/missing.err")"
grep -q -F "recipes_dir" "$work/missing.err" || fail "the error does not name recipes_dir: $(cat "$work/missing.err")"
echo "install_layout: installed to $prefix, ran $version without the build tree"
