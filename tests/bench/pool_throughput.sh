#!/usr/bin/env bash
# Benchmark: the throughput of N short runs (print(6*7)) sent by C clients at once, on one
# engine and on a pool of two, side by side. Two daemons of their own are started beside the
# suite's, with the suite's images: "one" uses the suite's engine alone (its engine_socket),
# "pool" the suite's engine plus the fixture's second dockerd (engine2) as an `engines` entry;
# `pybox vm start` of the pool copies the images to engine2 first (not timed). Rounds alternate
# one / pool; each prints the wall time of its N runs, runs per second and, for the pool, how
# many runs each engine took. Needs the suite's fixture (engine_up) and engine2 up:
#   PYBOX_HOME=/tmp/pybox-test-<hash> PYBOX_ENGINE2_DIR=/tmp/pybox-test-<hash>-engine2 \
#     tests/bench/pool_throughput.sh [N=40] [C=8] [ROUNDS=3]
set -euo pipefail
runs=${1:-40}
clients=${2:-8}
rounds=${3:-3}
: "${PYBOX_HOME:?the runtime folder of the suite}" "${PYBOX_ENGINE2_DIR:?the folder of the second dockerd}"
source "$(dirname "$0")/side_daemons.sh"
engine2_socket="$PYBOX_ENGINE2_DIR/docker.sock"
work=$(mktemp -d)
trap 'stop_daemons; rm -rf "$work"' EXIT

start_daemon one "{\"engine_socket\": \"$engine_socket\"}"
start_daemon pool "{\"engine_socket\": \"$engine_socket\", \"engines\": [{\"id\": \"engine2\", \"url\": \"unix://$engine2_socket\"}]}"

one_run() {  # home, output file
  printf 'print(6*7)\n' | PYBOX_HOME="$1" "$bin/pybox" exec - --json > "$2" 2> /dev/null || true
}
export -f one_run
export bin

batch() {  # name: N runs from C clients at once; prints "seconds runs/s engines"
  local dir="$home-bench-$1" out="$work/$1"
  rm -rf "$out"; mkdir "$out"
  local begun ended
  begun=$(date +%s.%N)
  seq 1 "$runs" | xargs -P "$clients" -I{} bash -c 'one_run "$0" "$1/{}.json"' "$dir" "$out"
  ended=$(date +%s.%N)
  python3 - "$out" "$begun" "$ended" "$runs" << 'PY'
import collections, json, os, sys
out, begun, ended, runs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
engines, ok = collections.Counter(), 0
for name in os.listdir(out):
    try:
        receipt = json.load(open(os.path.join(out, name)))
    except ValueError:
        continue
    if receipt["capture"]["stdout"] == "42\n":
        ok += 1
    engines[receipt.get("engine", {}).get("id", "?")] += 1
seconds = ended - begun
print(f"{seconds:7.2f} s  {runs / seconds:5.1f} runs/s  ok {ok}/{runs}  " +
      " ".join(f"{k}:{v}" for k, v in sorted(engines.items())))
PY
}

# One warm-up run each, not counted.
one_run "$home-bench-one" /dev/null
one_run "$home-bench-pool" /dev/null
printf '%d runs of print(6*7), %d clients at once\n' "$runs" "$clients"
printf '%-7s %-44s %s\n' round "one engine" "pool of two"
for round in $(seq 1 "$rounds"); do
  printf '%-7s %-44s %s\n' "$round" "$(batch one)" "$(batch pool)"
done
