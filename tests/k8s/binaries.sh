#!/usr/bin/env bash
# Usage: tests/k8s/binaries.sh DIR
# Links the test cluster's kube-apiserver and kubelet (v1.20, from Debian 12's kubernetes
# source package) and static pause into DIR, and says where each came from:
#  kube-apiserver and kubelet:
#   1. $PYBOX_K8S_BIN, if set (a folder that holds them, used as they are);
#   2. else ../shared/k8s beside the repository (kube-apiserver.s.xz, kubelet.s.xz),
#      decompressed into the cache (again only when a .xz changed);
#   3. else built from the source package into the cache by build_k8s.sh (about 15 min on 2
#      cores; once, then taken from the cache).
#  pause: $PYBOX_K8S_BIN/pause if there, else ../shared/k8s/pause, else built (static, seconds)
#  from the same source package.
# The cache is $PYBOX_K8S_CACHE, default ~/.cache/pybox-test/k8s (outside every test home, so
# it outlives CI runs).
set -euo pipefail
dir=${1:?usage: binaries.sh DIR}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PYBOX_K8S_CACHE:-$HOME/.cache/pybox-test/k8s}
shared="$source_dir/../shared/k8s"
built="$cache/built"
mkdir -p "$dir"
say() { echo "binaries: $*" >&2; }
use() {  # PROGRAM FILE
  [ -x "$2" ] || { say "$2 is missing or not executable"; exit 1; }
  ln -sfn "$2" "$dir/$1"
}

if [ -n "${PYBOX_K8S_BIN:-}" ]; then
  use kube-apiserver "$PYBOX_K8S_BIN/kube-apiserver"
  use kubelet "$PYBOX_K8S_BIN/kubelet"
  say "kube-apiserver and kubelet from PYBOX_K8S_BIN ($PYBOX_K8S_BIN)"
elif [ -f "$shared/kube-apiserver.s.xz" ] && [ -f "$shared/kubelet.s.xz" ]; then
  shared=$(cd "$shared" && pwd)
  mkdir -p "$cache/shared"
  for program in kube-apiserver kubelet; do
    # The .xz's SHA-256 beside the program says which .xz it came from.
    sum=$(sha256sum < "$shared/$program.s.xz" | cut -d' ' -f1)
    target="$cache/shared/$program"
    if [ ! -x "$target" ] || [ "$(cat "$target.xz-sha256" 2> /dev/null)" != "$sum" ]; then
      xz -dc "$shared/$program.s.xz" > "$target.partial.$$"
      chmod 755 "$target.partial.$$"
      mv "$target.partial.$$" "$target"
      echo "$sum" > "$target.xz-sha256"
      say "decompressed $shared/$program.s.xz into $cache/shared"
    fi
    use "$program" "$target"
  done
  say "kube-apiserver and kubelet from $shared (decompressed in $cache/shared)"
elif [ -x "$built/kube-apiserver" ] && [ -x "$built/kubelet" ]; then
  use kube-apiserver "$built/kube-apiserver"
  use kubelet "$built/kubelet"
  say "kube-apiserver and kubelet built earlier from Debian's kubernetes source package ($built)"
else
  say "no PYBOX_K8S_BIN and no $shared: building kube-apiserver, kubelet and pause from Debian's" \
      "kubernetes source package into $built (about 15 min on 2 cores, once)"
  "$source_dir/tests/k8s/build_k8s.sh" "$built" >&2
  use kube-apiserver "$built/kube-apiserver"
  use kubelet "$built/kubelet"
  say "kube-apiserver and kubelet built from Debian's kubernetes source package ($built)"
fi

if [ -n "${PYBOX_K8S_BIN:-}" ] && [ -x "$PYBOX_K8S_BIN/pause" ]; then
  use pause "$PYBOX_K8S_BIN/pause"
  say "pause from PYBOX_K8S_BIN"
elif [ -f "$shared/pause" ]; then
  mkdir -p "$cache/shared"
  install -m 755 "$shared/pause" "$cache/shared/pause.partial.$$"
  mv "$cache/shared/pause.partial.$$" "$cache/shared/pause"
  use pause "$cache/shared/pause"
  say "pause from $(cd "$shared" && pwd)"
else
  if [ ! -x "$built/pause" ]; then
    say "no pause in PYBOX_K8S_BIN or $shared: building it from Debian's kubernetes source package"
    "$source_dir/tests/k8s/build_k8s.sh" "$built" pause >&2
  fi
  use pause "$built/pause"
  say "pause built from Debian's kubernetes source package ($built)"
fi
