#!/usr/bin/env bash
# Benchmark: issue 30, part 4: a PyBox run on the test cluster (tests/k8s/), verified and
# receipted, against `kubectl run --rm -i --restart=Never --quiet` with the same sealed Pod spec
# (tests/bench/kubectl_run.sh, run here in the same session), and PyBox's runs per second on the
# cluster with 1, 4 and 8 clients at once.
# - PyBox: a pyboxd of its own (home $PYBOX_HOME-bench-cluster, tests/bench/side_daemons.sh) whose only engine taking runs is the
#   cluster ("max_runs" 4: the test node's 2 CPUs admit four 500m Pods), its images pushed by its
#   own `pybox vm start`; its local engine is the suite's ($PYBOX_HOME, tests/integration/env_up.sh),
#   which builds and pushes the images. Each run is `pybox exec - --json` of print(6*7), timed by
#   the client from start to exit; every run must print 42 and its receipt name the cluster.
# - kubectl: tests/bench/kubectl_run.sh N on the same cluster.
# Needs the suite's engine up ($PYBOX_HOME, $PYBOX_BIN: the figures in docs/kubernetes.md are of
# a release build's pyboxd and pybox, build-release/bin) and the cluster's cluster.env
# ($PYBOX_K8S_HOME). Not a test: ctest does not run it.
# Usage: tests/bench/kube_vs_kubectl.sh [N]   (default 20 sequential runs each, plus a warm-up)
set -euo pipefail
runs=${1:-20}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/side_daemons.sh
. "$source_dir/tests/bench/side_daemons.sh"
load_cluster_env
times=$(mktemp)
cleanup() {
  rm -f "$times"
  stop_daemons
}
trap cleanup EXIT
start_daemon cluster "$(cluster_only_config)"
home=$PYBOX_HOME-bench-cluster

pybox_run() {  # appends the client's wall time in seconds to $times; fails unless 42 from the cluster
  local begun ended receipt
  begun=$EPOCHREALTIME
  receipt=$(echo 'print(6*7)' | PYBOX_HOME=$home "$PYBOX_BIN/pybox" exec - --json)
  ended=$EPOCHREALTIME
  /usr/bin/python3 -c '
import json, sys
receipt = json.loads(sys.argv[1])
assert receipt["capture"]["stdout"] == "42\n", receipt["capture"]
assert receipt["engine"]["id"] == "cluster", receipt["engine"]' "$receipt"
  echo "$begun $ended" | awk '{ printf "%.3f\n", $2 - $1 }' >> "$times"
}

summary() {  # LABEL: the median, min, max and quartiles of $times
  sort -n "$times" | awk -v label="$1" '
    { t[NR] = $1 }
    END {
      median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%s, %d runs: median %.3f s, min %.3f s, max %.3f s, quartiles %.3f-%.3f s\n",
        label, NR, median, t[1], t[NR], t[int((NR + 3) / 4)], t[int((3 * NR + 3) / 4)]
    }'
}

pybox_run
: > "$times"
for _ in $(seq 1 "$runs"); do pybox_run; done
summary "pybox exec on the cluster (sealed Pod, verified, receipted), print(6*7)"

for clients in 1 4 8; do
  total=$((clients * 4))
  : > "$times"
  begun=$EPOCHREALTIME
  for c in $(seq 1 "$clients"); do
    (for _ in 1 2 3 4; do pybox_run; done) &
  done
  wait $(jobs -p | grep -v "^${daemon_pids[0]}$") 2> /dev/null || true
  ended=$EPOCHREALTIME
  [ "$(wc -l < "$times")" = "$total" ] || { echo "kube_vs_kubectl: $(wc -l < "$times") of $total runs succeeded" >&2; exit 1; }
  echo "$begun $ended $total $clients" | awk '{ printf "pybox on the cluster, %d clients at once: %d runs in %.2f s, %.2f runs/s\n", $4, $3, $2 - $1, $3 / ($2 - $1) }'
done

"$source_dir/tests/bench/kubectl_run.sh" "$runs"
echo "kube_vs_kubectl: load average $(cut -d' ' -f1-3 /proc/loadavg)"
