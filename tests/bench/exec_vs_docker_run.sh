#!/usr/bin/env bash
# Benchmark: N sequential runs of print(6*7) three ways, interleaved: `pybox exec` (kernel
# watcher on), `pybox exec` through a second daemon with the watcher switched off, and
# `docker run --rm -i` with the same image, limits and engine; then medians, minimums and the
# ratios against docker run. Needs a running pyboxd with a verified engine and a built stdlib
# image (for example after scripts/demo.sh, or with PYBOX_HOME=/tmp/pybox-test-<hash> while the
# suite's fixture is up). The second daemon lives in $PYBOX_HOME-bench-nowatch, uses the same
# engine and images, and is stopped at the end. Usage: tests/bench/exec_vs_docker_run.sh [N]
# (default 20).
set -euo pipefail
runs=${1:-20}
bin=${PYBOX_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
home=${PYBOX_HOME:-$HOME/.pybox/runtime}
docker_cli=${DOCKER_CLI:-/usr/bin/docker}
engine_socket="$home/engine/docker.sock"
seccomp_profile=$(cd "$(dirname "$0")/../.." && pwd)/proto/seccomp/pybox-seccomp-v1.json

image=$(grep -o '"image_id":"sha256:[0-9a-f]*"' "$home/images.json" | head -n 1 | cut -d'"' -f4)
[ -n "$image" ] || { echo "no stdlib image recorded in $home/images.json: run pybox setup" >&2; exit 1; }

# The second daemon: same engine, same images, no watcher.
nowatch="$home-bench-nowatch"
rm -rf "$nowatch"
mkdir -m 700 "$nowatch"
cp -r "$home/images.json" "$home/images.lock" "$home/recipes" "$nowatch/"
printf '{"engine_socket": "%s", "watcher": false}\n' "$engine_socket" > "$nowatch/config.json"
PYBOX_HOME="$nowatch" "$bin/pyboxd" 2> "$nowatch/pyboxd.log" &
nowatch_pid=$!
trap 'kill "$nowatch_pid" 2>/dev/null; wait "$nowatch_pid" 2>/dev/null; rm -rf "$nowatch"' EXIT
for _ in $(seq 1 100); do [ -S "$nowatch/pyboxd.sock" ] && break; sleep 0.05; done

program='print(6*7)'
pybox_run() { printf '%s\n' "$program" | PYBOX_HOME="$home" "$bin/pybox" exec - > /dev/null 2>&1; }
pybox_nowatch_run() { printf '%s\n' "$program" | PYBOX_HOME="$nowatch" "$bin/pybox" exec - > /dev/null 2>&1; }
docker_run() {
  printf '%s\n' "$program" | "$docker_cli" -H "unix://$engine_socket" run --rm -i \
    --network none --memory 128m --memory-swap 128m --pids-limit 32 --cpus 0.5 \
    --user 10000:10000 --cap-drop ALL --security-opt no-new-privileges --read-only \
    --security-opt "seccomp=$seccomp_profile" --ulimit core=0:0 \
    --tmpfs /tmp:size=16777216,noexec,nodev,nosuid --ulimit nofile=128:128 --log-driver none \
    "$image" timeout -s KILL 3 python3 -I -B -u - > /dev/null 2>&1
}
seconds() { # runs "$@" and prints its wall time in seconds
  local start=$EPOCHREALTIME
  "$@"
  local end=$EPOCHREALTIME
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", b - a }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -n | head -n 1; }

pybox_run; pybox_nowatch_run; docker_run  # warm every path once; not counted
pybox_times=(); nowatch_times=(); docker_times=()
for _ in $(seq 1 "$runs"); do
  pybox_times+=("$(seconds pybox_run)")
  nowatch_times+=("$(seconds pybox_nowatch_run)")
  docker_times+=("$(seconds docker_run)")
done
pybox_median=$(printf '%s\n' "${pybox_times[@]}" | median)
nowatch_median=$(printf '%s\n' "${nowatch_times[@]}" | median)
docker_median=$(printf '%s\n' "${docker_times[@]}" | median)
printf '%-38s %10s %10s %8s\n' "print(6*7), $runs runs each" "median s" "min s" "ratio"
row() { printf '%-38s %10s %10s %8s\n' "$1" "$2" "$3" "$(awk -v p="$2" -v d="$docker_median" 'BEGIN { printf "%.2f", p / d }')"; }
row "pybox exec - (watcher on)" "$pybox_median" "$(printf '%s\n' "${pybox_times[@]}" | minimum)"
row "pybox exec - (watcher off)" "$nowatch_median" "$(printf '%s\n' "${nowatch_times[@]}" | minimum)"
row "docker run --rm -i (same limits)" "$docker_median" "$(printf '%s\n' "${docker_times[@]}" | minimum)"
echo "ratio: median against docker run --rm -i; the watcher's cost is the first row minus the second"
