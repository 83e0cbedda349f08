#!/usr/bin/env bash
# ctest systemd_units: the systemd units as `cmake --install` writes them into a temporary prefix
# (user units in lib/systemd/user, system units in lib/systemd/system) name that prefix's
# pyboxd, and `systemd-analyze verify` (offline: it loads the files, starts nothing) finds no
# problem in them, each socket with its service. Starting them for real needs systemd as PID 1
# (or a `systemd --user` instance), which these machines lack: the socket activation itself is
# tested by handing a real pyboxd its socket as systemd does (integration/socket_activation_test).
#   PYBOX_BUILD   the build folder to install from
set -euo pipefail
: "${PYBOX_BUILD:?}"
work=$(mktemp -d /tmp/pybox-units-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "systemd_units: $*" >&2; exit 1; }
prefix=$work/prefix
cmake --install "$PYBOX_BUILD" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log" >&2; fail "install failed"; }

user=$prefix/lib/systemd/user
system=$prefix/lib/systemd/system
for unit in "$user/pyboxd.service" "$user/pyboxd.socket" "$system/pyboxd.service" "$system/pyboxd.socket"; do
  [ -f "$unit" ] || fail "$unit was not installed"
  grep -qx "Documentation=file://$prefix/share/doc/pybox/docs/install.md" "$unit" || fail "$unit names another doc folder"
done
grep -qx "ExecStart=$prefix/bin/pyboxd" "$user/pyboxd.service" || fail "the user unit does not start $prefix/bin/pyboxd"
grep -qx "ExecStart=$prefix/bin/pyboxd --system" "$system/pyboxd.service" ||
  fail "the system unit does not start $prefix/bin/pyboxd --system"
# Where `pybox` looks without PYBOX_HOME (common/paths.cpp) and, in system mode, /run/pybox.
grep -qx "ListenStream=%h/.pybox/runtime/pyboxd.sock" "$user/pyboxd.socket" || fail "the user socket is not where pybox looks"
grep -qx "ListenStream=/run/pybox/pyboxd.sock" "$system/pyboxd.socket" || fail "the system socket is not /run/pybox/pyboxd.sock"

# verify warns on stderr (an unknown key, a missing program) and fails on bad settings: both fail here.
verify() {
  local scope=$1; shift
  if ! XDG_RUNTIME_DIR=$work/xdg systemd-analyze "$scope" verify --man=no "$@" > "$work/verify.log" 2>&1 ||
     [ -s "$work/verify.log" ]; then
    cat "$work/verify.log" >&2
    fail "systemd-analyze $scope verify $*"
  fi
}
mkdir -m 700 "$work/xdg"
verify --system "$system/pyboxd.socket" "$system/pyboxd.service"
verify --user "$user/pyboxd.socket" "$user/pyboxd.service"
echo "systemd_units: 4 units installed under $prefix and verified by $(systemd-analyze --version | head -1)"
