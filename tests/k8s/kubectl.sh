#!/usr/bin/env bash
# Usage: tests/k8s/kubectl.sh
# Prints the path of Debian's kubectl 1.20 (package kubernetes-client), extracted with
# `apt-get download` and `dpkg-deb -x` into the cache ($PYBOX_K8S_CACHE, default
# ~/.cache/pybox-test/k8s) rather than installed: on these machines /usr/bin/kubectl belongs to
# google-cloud-sdk (kubectl 1.32). Downloads only when the cache has none.
set -euo pipefail
cache=${PYBOX_K8S_CACHE:-$HOME/.cache/pybox-test/k8s}
root="$cache/kubernetes-client"
kubectl="$root/usr/bin/kubectl"
if [ ! -x "$kubectl" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # apt-get download needs the package lists, which a fresh machine may not have yet.
  (cd "$work" && apt-get download -q kubernetes-client > /dev/null 2>&1) ||
    { apt-get update -q > /dev/null && (cd "$work" && apt-get download -q kubernetes-client > /dev/null); }
  dpkg-deb -x "$work"/kubernetes-client_*.deb "$work/root"
  # Another cluster starting at the same time may have put it there first: keep that one.
  if [ ! -x "$kubectl" ]; then
    rm -rf "$root"
    mkdir -p "$cache"
    mv "$work/root" "$root"
    echo "kubectl: extracted $(basename "$work"/kubernetes-client_*.deb) into $root" >&2
  fi
fi
echo "$kubectl"
