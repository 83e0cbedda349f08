#!/usr/bin/env bash
# Benchmark: what the seccomp fallback on a cluster costs (docs/kubernetes.md, "Seccomp"): the
# wall time of `pybox exec` of print(6*7) on the test cluster (tests/k8s/) with PyBox's profile on
# the node (Localhost), of the first run after the profile file was moved away (its Pod fails to
# start, is deleted, and a Pod asking for RuntimeDefault runs the program: BOX_REMADE), and of the
# run after it (the node remembered: RuntimeDefault at once). Each round puts the profile back
# and asks `vm status` (which makes the daemon look at the node again) before its Localhost run.
# - A pyboxd of its own (home $PYBOX_HOME-bench-cluster, tests/bench/side_daemons.sh) whose only engine taking runs is the
#   cluster, its images pushed by its own `pybox vm start`; its local engine is the suite's
#   ($PYBOX_HOME, tests/integration/env_up.sh). Every run must print 42, and its receipt name the
#   profile the round expects and BOX_REMADE only for the first run without the profile.
# Needs the suite's engine up ($PYBOX_HOME, $PYBOX_BIN) and the cluster's cluster.env
# ($PYBOX_K8S_HOME). Not a test: ctest does not run it.
# Usage: tests/bench/kube_seccomp_fallback.sh [N]   (default 10 rounds, plus a warm-up run)
set -euo pipefail
rounds=${1:-10}
# shellcheck source=tests/bench/side_daemons.sh
. "$(dirname "$0")/side_daemons.sh"
load_cluster_env
profile=$K8S_SECCOMP_ROOT/$K8S_SECCOMP_PROFILE
aside=$profile.moved-away
times=$(mktemp -d)
cleanup() {
  [ ! -f "$aside" ] || mv "$aside" "$profile"
  rm -rf "$times"
  stop_daemons
}
trap cleanup EXIT
start_daemon cluster "$(cluster_only_config)"
home=$PYBOX_HOME-bench-cluster

run() {  # KIND PROFILE_TYPE REMADE: appends the client's wall time to $times/KIND, checking the receipt
  local begun ended receipt
  begun=$EPOCHREALTIME
  receipt=$(echo 'print(6*7)' | PYBOX_HOME=$home "$PYBOX_BIN/pybox" exec - --json)
  ended=$EPOCHREALTIME
  /usr/bin/python3 -c '
import json, sys
receipt, expected, remade = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "yes"
assert receipt["capture"]["stdout"] == "42\n", receipt["capture"]
container = receipt["observed"]["effective_policy"]["spec"]["containers"][0]
assert container["securityContext"]["seccompProfile"]["type"] == expected, container["securityContext"]
codes = [e["code"] for e in receipt["explanations"]]
assert ("BOX_REMADE" in codes) == remade, codes' "$receipt" "$2" "$3"
  echo "$begun $ended" | awk '{ printf "%.3f\n", $2 - $1 }' >> "$times/$1"
}

summary() {  # KIND LABEL
  sort -n "$times/$1" | awk -v label="$2" '
    { t[NR] = $1 }
    END {
      median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%s, %d runs: median %.3f s, min %.3f s, max %.3f s\n", label, NR, median, t[1], t[NR]
    }'
}

run warmup Localhost no
for _ in $(seq 1 "$rounds"); do
  PYBOX_HOME=$home "$PYBOX_BIN/pybox" vm status > /dev/null
  run localhost Localhost no
  mv "$profile" "$aside"
  run fallback RuntimeDefault yes
  run remembered RuntimeDefault no
  mv "$aside" "$profile"
done
summary localhost "profile on the node (Localhost)"
summary fallback "first run on the node without it (a Pod made again, RuntimeDefault)"
summary remembered "the next run (the node remembered, RuntimeDefault at once)"
echo "kube_seccomp_fallback: load average $(cut -d' ' -f1-3 /proc/loadavg)"
