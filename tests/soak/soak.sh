#!/usr/bin/env bash
# Soak: many runs through one daemon, then what they left behind. Runs SEQUENTIAL runs one after
# another, then PARALLEL runs from CLIENTS clients at once (each client runs its share in turn),
# every one `print(6*7)` through `pybox exec` that must print 42 and exit 0. Prints failures,
# leftover boxes (the engine's containers carrying this installation's pybox.owner label) and
# run parent cgroups, both less those of the boxes pyboxd keeps warm, the daemon's RSS and open
# fds before and after (each once its next warm box is started), and the median and p95 wall
# time of each phase. Fails if any run failed, anything was left behind, the fd count
# changed, or the RSS grew by more than RSS_SLACK_KB (default 1024).
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
labelled() { # $@: extra docker ps options
  "$docker_cli" -H "unix://$home/engine/docker.sock" ps -q --no-trunc --filter "label=pybox.owner=$installation" "$@"
}
# The boxes pyboxd keeps warm (`pybox attempts --json`: unsettled, in progress and warm), one
# "RUN_ID CONTAINER_ID" a line; waits up to 5 s while one is being created (no container ID yet).
warm_boxes() {
  for _ in $(seq 1 100); do
    "$bin/pybox" attempts --json | python3 -c 'import json, sys
warm = [e for e in json.load(sys.stdin)["unsettled"] if e["in_progress"] and e["warm"]]
for e in warm: print(e["run_id"], e["container_id"])
sys.exit(1 if any(not e["container_id"] for e in warm) else 0)' && return
    sleep 0.05
  done
}
# Boxes and run parent cgroups left behind: those of this installation less the warm boxes' (read
# before and after the listing, so that a box made warm meanwhile is told apart).
leftover_boxes() {
  local warm listed
  warm=$(warm_boxes); listed=$(labelled -a); warm+=$'\n'$(warm_boxes)
  comm -23 <(printf '%s\n' "$listed" | sed '/^$/d' | sort -u) \
    <(printf '%s\n' "$warm" | awk 'NF == 2 { print $2 }' | sort -u) | wc -l
}
leftover_run_parents() {
  local warm listed
  warm=$(warm_boxes)
  listed=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -path "*/$run_parents/*" -type d)
  warm+=$'\n'$(warm_boxes)
  printf '%s\n' "$listed" | sed '/^$/d' | { grep -v -F -f <(printf '%s\n' "$warm" | awk 'NF == 2 { print "/" $1 }') || true; } |
    wc -l
}
# Waits up to 15 s until pyboxd holds its warm boxes (config.json warm_boxes, default 1; none
# when box_expiry_s < 36), each started: nothing is being prepared, so its fds are an idle one's.
warm_wanted=$(python3 -c 'import json, sys
config = json.load(open(sys.argv[1]))
print(0 if config.get("box_expiry_s", 120) < 36 else config.get("warm_boxes", 1))' "$home/config.json")
settle_warm() {
  local warm running
  for _ in $(seq 1 150); do
    warm=$(warm_boxes | awk 'NF == 2 { print $2 }' | sort); running=$(labelled --filter status=running | sort)
    if [ "$(printf '%s' "$warm" | grep -c .)" -eq "$warm_wanted" ] &&
       [ -z "$(comm -23 <(printf '%s\n' "$warm" | sed '/^$/d') <(printf '%s\n' "$running"))" ]; then
      return 0
    fi
    sleep 0.1
  done
  echo "soak: pyboxd's warm boxes did not settle" >&2
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
settle_warm
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
settle_warm  # the next warm box, made after the last run
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
