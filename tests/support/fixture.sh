# Sourced by the scripts around the suite's fixture (scripts/test.sh, tests/soak/with_fixture.sh,
# tests/integration/env_down.sh, tests/install/deb_test.sh).
#
# test_home BUILD_DIR: the runtime folder ctest gives the fixture of that build folder,
# /tmp/pybox-test-<first 8 hex digits of the MD5 of its path> (tests/CMakeLists.txt: a short
# path, so that the engine's socket fits in 108 bytes).
test_home() {
  printf '/tmp/pybox-test-%s\n' "$(printf '%s' "$(cd "$1" && pwd)" | md5sum | cut -c1-8)"
}

# remove_engine_state HOME: removes /var/lib/pybox/<engine key> of the runtime folder HOME (its
# images and layers: gigabytes over a few runs), unless something is still mounted under it. The
# key is daemon/vm/engine_process.cpp's engine_key: the first 16 hex digits of SHA-256 over the
# installation id, a NUL and the runtime folder.
remove_engine_state() {
  local home=$1 installation root state_dir
  [ -f "$home/installation.json" ] || return 0
  installation=$(grep -o '"installation_id":"[0-9a-f]*"' "$home/installation.json" | cut -d'"' -f4)
  [ -n "$installation" ] || return 0
  root=$(cd "$home" && pwd -P)
  state_dir=/var/lib/pybox/$(printf '%s\0%s' "$installation" "$root" | sha256sum | cut -c1-16)
  [ -d "$state_dir" ] || return 0
  if grep -q " $state_dir/" /proc/self/mounts; then
    echo "remove_engine_state: $state_dir still has mounts; left in place" >&2
  else
    rm -rf "$state_dir"
  fi
}
