#!/usr/bin/env bash
# Usage: tests/k8s/binaries.sh
# Prints the folder that holds the test cluster's kube-apiserver, kubelet (v1.20, from Debian
# 12's kubernetes source package) and static pause, and says on stderr where they came from:
#  1. $PYBOX_K8S_BIN, if set (a folder with those three programs, as they are);
#  2. else ../shared/k8s beside the repository (kube-apiserver.s.xz, kubelet.s.xz, pause),
#     decompressed into the cache (again only when a .xz changed);
#  3. else built from the source package into the cache by build_k8s.sh (about 30 min on 2
#     cores; once, then taken from the cache).
# The cache is $PYBOX_K8S_CACHE, default ~/.cache/pybox-test/k8s (outside every test home, so
# it outlives CI runs).
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PYBOX_K8S_CACHE:-$HOME/.cache/pybox-test/k8s}
programs=(kube-apiserver kubelet pause)

check_folder() {
  local program
  for program in "${programs[@]}"; do
    [ -x "$1/$program" ] || { echo "binaries: $1/$program is missing or not executable" >&2; return 1; }
  done
}

if [ -n "${PYBOX_K8S_BIN:-}" ]; then
  check_folder "$PYBOX_K8S_BIN"
  echo "binaries: kube-apiserver, kubelet and pause from PYBOX_K8S_BIN ($PYBOX_K8S_BIN)" >&2
  echo "$PYBOX_K8S_BIN"
  exit 0
fi

shared="$source_dir/../shared/k8s"
if [ -f "$shared/kube-apiserver.s.xz" ] && [ -f "$shared/kubelet.s.xz" ] && [ -f "$shared/pause" ]; then
  out="$cache/shared"
  mkdir -p "$out"
  for program in kube-apiserver kubelet; do
    # The .xz's SHA-256 beside the program says which .xz it came from.
    sum=$(sha256sum < "$shared/$program.s.xz" | cut -d' ' -f1)
    if [ ! -x "$out/$program" ] || [ "$(cat "$out/$program.xz-sha256" 2> /dev/null)" != "$sum" ]; then
      xz -dc "$shared/$program.s.xz" > "$out/$program.partial"
      chmod 755 "$out/$program.partial"
      mv "$out/$program.partial" "$out/$program"
      echo "$sum" > "$out/$program.xz-sha256"
      echo "binaries: decompressed $shared/$program.s.xz into $out" >&2
    fi
  done
  install -m 755 "$shared/pause" "$out/pause"
  echo "binaries: kube-apiserver, kubelet and pause from $(cd "$shared" && pwd) (decompressed in $out)" >&2
  echo "$out"
  exit 0
fi

out="$cache/built"
if check_folder "$out" 2> /dev/null; then
  echo "binaries: kube-apiserver, kubelet and pause built earlier from Debian's kubernetes source package ($out)" >&2
else
  echo "binaries: no PYBOX_K8S_BIN and no $shared: building them from Debian's kubernetes source package" \
       "into $out (about 30 min on 2 cores, once)" >&2
  "$source_dir/tests/k8s/build_k8s.sh" "$out" >&2
  check_folder "$out"
  echo "binaries: kube-apiserver, kubelet and pause built from Debian's kubernetes source package ($out)" >&2
fi
echo "$out"
