#!/usr/bin/env bash
# Usage: tests/k8s/apiserver.sh stop|start   (as root, with the cluster of $PYBOX_K8S_HOME up)
# Stops the test cluster's kube-apiserver, everything else running on (etcd, the kubelet and its
# Pods, the registry), or starts it again with the same flags, address and certificates: for a
# test of what happens when the apiserver goes away in the middle of a run. Returns once the
# apiserver process has ended (stop: the cluster's init says so in run/apiserver.state) or
# K8S_SERVER's /readyz answers ok again (start), at most 60 s.
set -euo pipefail
: "${PYBOX_K8S_HOME:=/tmp/pybox-k8s}"
H=$(cd "$PYBOX_K8S_HOME" && pwd -P)
case "${1:-}" in
  stop) signal=USR1 want=down ;;
  start) signal=USR2 want=ready ;;
  *) echo "usage: apiserver.sh stop|start" >&2; exit 2 ;;
esac
[ -f "$H/cluster.env" ] || { echo "apiserver: no cluster is up in $H" >&2; exit 1; }
# shellcheck source=/dev/null
. "$H/cluster.env"
ns_pid=$(cat "$H/ns_init.pid")
if [ "$ns_pid" != "$K8S_NS_PID" ] || [ ! -d "/proc/$ns_pid" ]; then
  echo "apiserver: the cluster's init is gone" >&2
  exit 1
fi
kill "-$signal" "$ns_pid"
for _ in $(seq 600); do
  if [ "$want" = down ]; then
    [ "$(cat "$H/run/apiserver.state")" = stopped ] && exit 0
  elif curl -sf -m 2 -A pybox-k8s-apiserver-sh --cacert "$K8S_CA" --cert "$H/pki/admin.crt" \
         --key "$H/pki/admin.key" "$K8S_SERVER/readyz" > /dev/null 2>&1; then
    exit 0
  fi
  sleep 0.1
done
echo "apiserver: not $want 60 s after SIG$signal to the cluster's init; $H/logs/apiserver.log:" >&2
tail -n 20 "$H/logs/apiserver.log" >&2
exit 1
