#!/usr/bin/env bash
# Benchmark: the baseline of issue 30, part 4: N sequential `kubectl run --rm -i --restart=Never
# --quiet` of print(6*7) on the test cluster (tests/k8s/), with the sealed Pod's spec as the
# overrides (tests/k8s/sealed_pod.py, the same spec the smoke test creates; kubectl's container
# list is replaced by it). Each run's wall time is the client's, from start to exit; every run
# must print exactly 42. Prints the median, minimum, maximum and the spread between the quartiles,
# how many runs kubectl said it could not attach to and fell back to the logs (it also reads the
# logs, without saying so, when the first Pod status it sees is already terminal: -v=6 shows
# which), and the load average (the figure depends on what else runs).
# Uses the cluster of $PYBOX_K8S_HOME (default /tmp/pybox-k8s) if it is up, else starts one there
# and stops it at the end. Not a test: ctest does not run it.
# Usage: tests/bench/kubectl_run.sh [N]   (default 20, plus one warm-up run not counted)
set -euo pipefail
runs=${1:-20}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
export PYBOX_K8S_HOME=${PYBOX_K8S_HOME:-/tmp/pybox-k8s}
env_file="$PYBOX_K8S_HOME/cluster.env"
times=$(mktemp)
errors=$(mktemp)
started_here=no
cleanup() {
  rm -f "$times" "$errors"
  [ "$started_here" = no ] || "$source_dir/tests/k8s/cluster_down.sh"
}
trap cleanup EXIT
if [ ! -f "$env_file" ]; then
  started_here=yes
  "$source_dir/tests/k8s/cluster_up.sh"
fi
# shellcheck source=/dev/null
. "$env_file"
overrides=$(/usr/bin/python3 "$source_dir/tests/k8s/sealed_pod.py" overrides "$env_file" 'print(6*7)')

fallbacks=0
run_once() {  # NAME: appends the wall time in seconds to $times; fails unless the output is exactly 42
  local begun output ended
  begun=$EPOCHREALTIME
  output=$("$K8S_KUBECTL" --kubeconfig "$K8S_ADMIN_KUBECONFIG" --cache-dir "$PYBOX_K8S_HOME/kubectl-cache" \
    -n "$K8S_NAMESPACE" run "$1" --rm -i --restart=Never --quiet --image="$K8S_TEST_IMAGE" \
    --overrides="$overrides" < /dev/null 2> "$errors")
  ended=$EPOCHREALTIME
  [ "$output" = 42 ] || { echo "kubectl_run: $1 printed '$output', not 42" >&2; cat "$errors" >&2; return 1; }
  if grep -q "falling back to logs" "$errors"; then fallbacks=$((fallbacks + 1)); fi
  echo "$begun $ended" | awk '{ printf "%.3f\n", $2 - $1 }' >> "$times"
}

run_once kubectl-run-warmup
: > "$times"
fallbacks=0
for i in $(seq 1 "$runs"); do run_once "kubectl-run-$i"; done
sort -n "$times" | awk -v runs="$runs" '
  { t[NR] = $1 }
  END {
    median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
    printf "kubectl run --rm -i --restart=Never --quiet, print(6*7), %d runs: median %.3f s, min %.3f s, max %.3f s, quartiles %.3f-%.3f s\n",
      runs, median, t[1], t[NR], t[int((NR + 3) / 4)], t[int((3 * NR + 3) / 4)]
  }'
echo "kubectl_run: in $fallbacks of $runs runs kubectl could not attach and fell back to the logs;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
