#!/usr/bin/env bash
# Benchmark: N sequential `pybox exec` runs of print(6*7) against N `docker run --rm -i` runs
# with the same image, the same limits and the same engine, interleaved, then the medians and
# their ratio. Needs a running pyboxd with a verified engine and a built stdlib image (for
# example after scripts/demo.sh, or with PYBOX_HOME=/tmp/pybox-test-<hash> while the suite's fixture
# is up). Usage: tests/bench/exec_vs_docker_run.sh [N] (default 20).
set -euo pipefail
runs=${1:-20}
bin=${PYBOX_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
home=${PYBOX_HOME:-$HOME/.pybox/runtime}
docker_cli=${DOCKER_CLI:-/usr/bin/docker}
socket="unix://$home/engine/docker.sock"

image=$(grep -o '"image_id":"sha256:[0-9a-f]*"' "$home/images.json" | head -n 1 | cut -d'"' -f4)
[ -n "$image" ] || { echo "no stdlib image recorded in $home/images.json: run pybox setup" >&2; exit 1; }

program='print(6*7)'
pybox_run() { printf '%s\n' "$program" | "$bin/pybox" exec - > /dev/null 2>&1; }
docker_run() {
  printf '%s\n' "$program" | "$docker_cli" -H "$socket" run --rm -i \
    --network none --memory 128m --memory-swap 128m --pids-limit 32 --cpus 0.5 \
    --user 10000:10000 --cap-drop ALL --security-opt no-new-privileges --read-only \
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

pybox_run; docker_run  # warm both paths once; not counted
pybox_times=(); docker_times=()
for _ in $(seq 1 "$runs"); do
  pybox_times+=("$(seconds pybox_run)")
  docker_times+=("$(seconds docker_run)")
done
pybox_median=$(printf '%s\n' "${pybox_times[@]}" | median)
docker_median=$(printf '%s\n' "${docker_times[@]}" | median)
pybox_min=$(printf '%s\n' "${pybox_times[@]}" | sort -n | head -n 1)
docker_min=$(printf '%s\n' "${docker_times[@]}" | sort -n | head -n 1)
printf '%-34s %10s %10s\n' "print(6*7), $runs runs each" "median s" "min s"
printf '%-34s %10s %10s\n' "pybox exec -" "$pybox_median" "$pybox_min"
printf '%-34s %10s %10s\n' "docker run --rm -i (same limits)" "$docker_median" "$docker_min"
awk -v p="$pybox_median" -v d="$docker_median" 'BEGIN { printf "ratio pybox/docker (median): %.2f\n", p / d }'
