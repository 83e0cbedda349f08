#!/usr/bin/env bash
# Benchmark: the apiserver requests one PyBox run on the test cluster (tests/k8s/) costs, from the
# apiserver's own counter apiserver_request_total (its /metrics, read as the cluster's admin)
# before and after N sequential runs of each program, by verb, resource and subresource, per run.
# The counter also counts the kubelet's requests about the same Pods (its status updates), so
# the figures are the run's whole cost to the apiserver, not PyBox's alone. Programs:
# print(6*7), and a sleep of 3 s, whose end wait lasts about 3 s longer.
# - PyBox: a pyboxd of its own (home $PYBOX_HOME-bench-cluster, tests/bench/side_daemons.sh) whose
#   only engine taking runs is the cluster; its local engine is the suite's
#   ($PYBOX_HOME, tests/integration/env_up.sh).
# Needs the suite's engine up ($PYBOX_HOME, $PYBOX_BIN) and the cluster's cluster.env
# ($PYBOX_K8S_HOME). Not a test: ctest does not run it.
# Usage: tests/bench/kube_apiserver_requests.sh [N]   (default 10 runs of each program)
set -euo pipefail
runs=${1:-10}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/side_daemons.sh
. "$source_dir/tests/bench/side_daemons.sh"
load_cluster_env
before=$(mktemp)
after=$(mktemp)
cleanup() {
  rm -f "$before" "$after"
  stop_daemons
}
trap cleanup EXIT
start_daemon cluster "$(cluster_only_config)"
home=$PYBOX_HOME-bench-cluster

counters() {  # the apiserver's request counters of Pods, one "VERB resource[/subresource] count" a line
  "$K8S_KUBECTL" --kubeconfig "$K8S_ADMIN_KUBECONFIG" get --raw /metrics |
    awk '/^apiserver_request_total\{/ && /resource="pods"/ {
      match($0, /verb="[A-Z]*"/); verb = substr($0, RSTART + 6, RLENGTH - 7)
      match($0, /subresource="[a-z]*"/); sub_ = substr($0, RSTART + 13, RLENGTH - 14)
      match($0, /scope="[a-z]*"/); scope = substr($0, RSTART + 7, RLENGTH - 8)
      key = verb " pods" (sub_ == "" ? "" : "/" sub_) " (" scope ")"
      count[key] += $NF
    }
    END { for (k in count) print k "\t" count[k] }' | sort
}

measure() {  # label, program
  local program=$2
  counters > "$before"
  for _ in $(seq 1 "$runs"); do
    printf '%s\n' "$program" | PYBOX_HOME=$home "$PYBOX_BIN/pybox" exec - --json --timeout 10 > /dev/null
  done
  counters > "$after"
  echo "$1, $runs runs: apiserver requests about Pods per run"
  join -t$'\t' -a 2 -e 0 -o 0,1.2,2.2 "$before" "$after" |
    awk -F'\t' -v runs="$runs" '{ d = $3 - $2; if (d > 0) { printf "  %-40s %7.1f\n", $1, d / runs; total += d } }
      END { printf "  %-40s %7.1f\n", "all", total / runs }'
}

printf 'print(6*7)\n' | PYBOX_HOME=$home "$PYBOX_BIN/pybox" exec - --json > /dev/null  # warm-up
measure "print(6*7)" 'print(6*7)'
measure "time.sleep(3)" 'import time; time.sleep(3)'
