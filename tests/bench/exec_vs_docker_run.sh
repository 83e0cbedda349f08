#!/usr/bin/env bash
# Benchmark: N sequential runs of print(6*7) three ways, interleaved: `pybox exec` (kernel
# watcher on), `pybox exec` through a second daemon with the watcher switched off, and
# `docker run --rm -i` with the same image, limits and engine; then medians, minimums and the
# ratios against docker run. Needs a running pyboxd with a verified engine and a built stdlib
# image (for example after scripts/demo.sh, or with PYBOX_HOME=/tmp/pybox-test-<hash> while the
# suite's fixture is up). The second daemon lives in $PYBOX_HOME-bench-nowatch, uses the same
# engine and images, and is stopped at the end. Both daemons keep their warm box (warm_boxes
# defaults to 1) and the other two runs of a round give it time to be ready, so the pybox rows
# are mostly warm runs (runs that move files always run cold); tests/bench/warm_vs_cold.sh
# measures warm and cold runs apart.
# Usage: tests/bench/exec_vs_docker_run.sh [N]
# (default 20). With PYBOX_BENCH_IMAGE=data the program is `import numpy, pandas` in the data
# image, and docker run gets the data limits (512 MiB, 64 pids, 1 core). With
# PYBOX_BENCH_FILES=N the runs move files: N inputs of 100 bytes go in and one file comes back
# (`pybox exec --in DIR --out DIR --force`); docker run gets the same files as a tar on stdin,
# unpacked by Python into its 64 MiB /tmp, and prints the output file on stdout.
set -euo pipefail
runs=${1:-20}
export PYBOX_HOME=${PYBOX_HOME:-$HOME/.pybox/runtime}
source "$(dirname "$0")/side_daemons.sh"

image_name=${PYBOX_BENCH_IMAGE:-stdlib}
case "$image_name" in
  stdlib) program='print(6*7)' ;;
  data) program='import numpy, pandas' ;;
  *) echo "PYBOX_BENCH_IMAGE is stdlib or data" >&2; exit 2 ;;
esac
box_limits "$image_name"
image=$(image_id "$image_name")
[ -n "$image" ] || { echo "no $image_name image recorded in $home/images.json: run pybox setup" >&2; exit 1; }

# The second daemon: same engine, same images, no watcher.
trap 'stop_daemons; rm -rf "${work:-}"' EXIT
start_daemon nowatch "{\"engine_socket\": \"$engine_socket\", \"watcher\": false}"
nowatch="$home-bench-nowatch"

files=${PYBOX_BENCH_FILES:-0}
files_args=(); tmpfs_bytes=16777216; docker_command=(python3 -I -B -u -)
if [ "$files" -gt 0 ]; then
  work=$(mktemp -d); mkdir "$work/in" "$work/out"
  for i in $(seq 1 "$files"); do head -c 100 /dev/urandom > "$work/in/f$i"; done
  program="import os; open('out/count.txt', 'w').write(str(len(os.listdir('in'))))"
  files_args=(--in "$work/in" --out "$work/out" --force); tmpfs_bytes=67108864
  docker_command=(python3 -I -B -u -c "import io, os, sys, tarfile
os.makedirs('/tmp/work/out'); os.chdir('/tmp/work')
tarfile.open(fileobj=io.BytesIO(sys.stdin.buffer.read()), mode='r').extractall('in')
$program
sys.stdout.write(open('out/count.txt').read())")
fi
program_input() { if [ "$files" -gt 0 ]; then tar c -C "$work" in; else printf '%s\n' "$program"; fi; }
pybox_run() { printf '%s\n' "$program" | PYBOX_HOME="$home" "$bin/pybox" exec --image "$image_name" --timeout 30 "${files_args[@]}" - > /dev/null 2>&1; }
pybox_nowatch_run() { printf '%s\n' "$program" | PYBOX_HOME="$nowatch" "$bin/pybox" exec --image "$image_name" --timeout 30 "${files_args[@]}" - > /dev/null 2>&1; }
docker_run() {
  program_input | "$docker_cli" -H "unix://$engine_socket" run --rm -i "${box_docker_flags[@]}" \
    "${box_limits_flags[@]}" --tmpfs "/tmp:size=$tmpfs_bytes,noexec,nodev,nosuid" \
    "$image" timeout -s KILL 31 "${docker_command[@]}" > /dev/null 2>&1
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
label="$program ($image_name)"; [ "$files" -gt 0 ] && label="$files inputs in, 1 output back ($image_name)"
printf '%-38s %10s %10s %8s\n' "$label, $runs runs each" "median s" "min s" "ratio"
row() { printf '%-38s %10s %10s %8s\n' "$1" "$2" "$3" "$(awk -v p="$2" -v d="$docker_median" 'BEGIN { printf "%.2f", p / d }')"; }
row "pybox exec - (watcher on)" "$pybox_median" "$(printf '%s\n' "${pybox_times[@]}" | minimum)"
row "pybox exec - (watcher off)" "$nowatch_median" "$(printf '%s\n' "${nowatch_times[@]}" | minimum)"
row "docker run --rm -i (same limits)" "$docker_median" "$(printf '%s\n' "${docker_times[@]}" | minimum)"
echo "ratio: median against docker run --rm -i; the watcher's cost is the first row minus the second"
