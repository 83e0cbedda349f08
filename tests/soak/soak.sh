#!/usr/bin/env bash
# Soak: many runs through one daemon, then what they left behind. Runs SEQUENTIAL runs one after
# another, then PARALLEL runs from CLIENTS clients at once (each client runs its share in turn),
# every one `print(6*7)` through `pybox exec` that must print 42 and exit 0. Prints failures,
# leftover boxes (the engine's containers carrying this installation's pybox.owner label) and
# run parent cgroups, not counting the daemon's warm boxes (`pybox attempts --json`), the
# daemon's RSS and open fds before and after (both with its warm boxes made and running), and the
# median and p95 wall time of each phase. Fails if any run failed, anything was left behind, the
# fd count changed, or the RSS grew by more than RSS_SLACK_KB (default 1024).
# Needs a running pyboxd with a verified engine and a built stdlib image (the suite's fixture,
# or scripts/demo.sh). Usage: tests/soak/soak.sh [SEQUENTIAL [PARALLEL [CLIENTS]]]
# (default 1000 200 8), with PYBOX_HOME and PYBOX_BIN as for tests/bench/.
set -euo pipefail
sequential=${1:-1000}
parallel=${2:-200}
clients=${3:-8}
rss_slack_kb=${RSS_SLACK_KB:-1024}
bin=${PYBOX_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
home=${PYBOX_HOME:-$HOME/.pybox/runtime}
docker_cli=${DOCKER_CLI:-/usr/bin/docker}
export PYBOX_HOME="$home"

daemon_pid=$(cat "$home/pyboxd.pid")
installation=$(grep -o '"installation_id":"[0-9a-f]*"' "$home/installation.json" | cut -d'"' -f4)
run_parents="pybox-$(printf '%s' "$installation" | sha256sum | cut -c1-16)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status"; }
fd_count() { ls "/proc/$daemon_pid/fd" | wc -l; }
engine() { "$docker_cli" -H "unix://$home/engine/docker.sock" "$@"; }
# The daemon's warm boxes into $scratch/warm, "CONTAINER_ID RUN_ID" a line ("-" while its create
# call has not answered); waits up to 5 s until every one's container is running (made, attached
# and started: the daemon then holds just what a waiting warm box needs).
read_warm_boxes() {
  local deadline=$((SECONDS + 5)) running
  while [ "$SECONDS" -le "$deadline" ]; do
    running=$(engine ps -q --no-trunc --filter status=running --filter "label=pybox.owner=$installation")
    "$bin/pybox" attempts --json | python3 -c 'import json, sys
warm = [note for note in json.load(sys.stdin)["unsettled"] if note["warm"]]
for note in warm: print(note["container_id"] or "-", note["run_id"])
sys.exit(any(note["container_id"] not in sys.argv[1].split() for note in warm))' "$running" > "$scratch/warm" && return 0
    sleep 0.1
  done
  echo "soak: the daemon's warm boxes were not all running after 5 s" >&2
}
# Leftovers are what is not a warm box: its container, its run parent (and, with cgroup v2, the
# box's cgroup under it).
leftover_boxes() {
  engine ps -a -q --no-trunc --filter "label=pybox.owner=$installation" |
    { grep -vxF -f <(cut -d' ' -f1 "$scratch/warm") || true; } | wc -l
}
leftover_run_parents() {
  find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -path "*/$run_parents/*" -type d |
    { grep -vF -f <(awk -v at="/$run_parents/" '{ print at $2 }' "$scratch/warm") || true; } | wc -l
}
# One run; appends its wall time to $1, or "fail" when it did not print 42 and exit 0.
one_run() {
  local start=$EPOCHREALTIME output
  if output=$(printf 'print(6*7)\n' | "$bin/pybox" exec - 2> /dev/null) && [ "$output" = 42 ]; then
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f\n", b - a }' >> "$1"
  else
    echo fail >> "$1"
  fi
}
client() { # $1 = runs, $2 = times file
  for _ in $(seq 1 "$1"); do one_run "$2"; done
}
# "median p95 failures" of a times file.
summarize() {
  local failures
  failures=$(grep -c '^fail$' "$1" || true)
  grep -v '^fail$' "$1" | sort -n | awk -v failures="$failures" '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print "- - " failures; exit }
      p95 = int(NR * 0.95 + 0.999)
      printf "%.3f %.3f %d\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[p95], failures
    }'
}

client 20 "$scratch/warmup"  # the allocator and the engine settle; not counted
sleep 1; read_warm_boxes      # the RSS and fds are measured with the warm boxes ready, as at the end
rss_start=$(rss_kb); fds_start=$(fd_count)
start=$SECONDS
client "$sequential" "$scratch/sequential"
sequential_seconds=$((SECONDS - start))
start=$SECONDS
share=$(( (parallel + clients - 1) / clients ))
for i in $(seq 1 "$clients"); do
  runs=$(( parallel - (i - 1) * share )); [ "$runs" -gt "$share" ] && runs=$share
  [ "$runs" -gt 0 ] && client "$runs" "$scratch/parallel.$i" &
done
wait
parallel_seconds=$((SECONDS - start))
cat "$scratch"/parallel.* > "$scratch/parallel"
sleep 1  # the last box's removal is confirmed before the answer; give the engine a moment anyway
read_warm_boxes  # the warm box made after the last run
rss_end=$(rss_kb); fds_end=$(fd_count)
boxes=$(leftover_boxes); parents=$(leftover_run_parents)

read -r seq_median seq_p95 seq_failures < <(summarize "$scratch/sequential")
read -r par_median par_p95 par_failures < <(summarize "$scratch/parallel")
printf '%-34s %10s %10s %10s %10s\n' "phase" "runs" "failures" "median s" "p95 s"
printf '%-34s %10d %10d %10s %10s\n' "sequential ($sequential_seconds s)" "$sequential" "$seq_failures" "$seq_median" "$seq_p95"
printf '%-34s %10d %10d %10s %10s\n' "$clients clients at once ($parallel_seconds s)" "$parallel" "$par_failures" "$par_median" "$par_p95"
echo "leftover boxes: $boxes   leftover run parent cgroups: $parents"
echo "daemon RSS: $rss_start KiB -> $rss_end KiB   open fds: $fds_start -> $fds_end"

status=0
[ "$seq_failures" -eq 0 ] && [ "$par_failures" -eq 0 ] || { echo "soak: runs failed" >&2; status=1; }
[ "$boxes" -eq 0 ] && [ "$parents" -eq 0 ] || { echo "soak: runs left things behind" >&2; status=1; }
[ "$fds_end" -eq "$fds_start" ] || { echo "soak: the daemon's open fds changed" >&2; status=1; }
[ $((rss_end - rss_start)) -le "$rss_slack_kb" ] || { echo "soak: the daemon's RSS grew by more than $rss_slack_kb KiB" >&2; status=1; }
exit $status
