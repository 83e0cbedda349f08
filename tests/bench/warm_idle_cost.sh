#!/usr/bin/env bash
# Benchmark (issue 10): what a warm box costs while it waits for its program. Starts a daemon of
# its own beside the suite's (default config: warm_boxes 1, watcher on; same engine and
# images), waits until its warm box runs, then reads, at the start and after S seconds of idle:
# the box's cgroup (memory usage and its rss/cache split, CPU time), the processes in it, its
# containerd-shim (RSS, PSS, CPU time) and any runc process naming the box, and the daemon's own
# RSS and CPU time beside those of a daemon with warm_boxes 0. Prints the readings and the CPU
# used over the idle time. cgroup v1 and v2. Needs the suite's fixture up:
#   PYBOX_HOME=/tmp/pybox-test-<hash> tests/bench/warm_idle_cost.sh [S=30]
set -euo pipefail
idle_s=${1:-30}
source "$(dirname "$0")/side_daemons.sh"
trap stop_daemons EXIT
start_daemon idle "{\"engine_socket\": \"$engine_socket\"}"
start_daemon none "{\"engine_socket\": \"$engine_socket\", \"warm_boxes\": 0}"  # for comparison
daemon_pid=${daemon_pids[0]}
none_pid=${daemon_pids[1]}
owner=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["installation_id"])' \
  "$home-bench-idle/installation.json")
docker_engine() { "$docker_cli" -H "unix://$engine_socket" "$@"; }

box=
for _ in $(seq 1 200); do
  box=$(docker_engine ps -q --no-trunc --filter "label=pybox.owner=$owner" --filter status=running)
  [ -n "$box" ] && break
  sleep 0.05
done
[ -n "$box" ] || { echo "warm_idle_cost: no warm box running after 10 s" >&2; exit 1; }
box_pid=$(docker_engine inspect -f '{{.State.Pid}}' "$box")
shim_pid=$(awk '{ print $4 }' "/proc/$box_pid/stat")  # the box's first process is the shim's child
if grep -q '^[0-9]*:memory:' "/proc/$box_pid/cgroup"; then  # v1
  memory_dir=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' "/proc/$box_pid/cgroup")
  cpu_dir=/sys/fs/cgroup/cpuacct$(sed -n 's/^[0-9]*:\([^:]*,\)\?cpuacct\(,[^:]*\)\?://p' "/proc/$box_pid/cgroup")
  memory_now() { cat "$memory_dir/memory.usage_in_bytes"; }
  memory_split() { awk '$1 == "total_rss" || $1 == "total_cache" || $1 == "total_mapped_file" { printf "%s %d KiB  ", $1, $2 / 1024 }' "$memory_dir/memory.stat"; }
  cpu_ns() { cat "$cpu_dir/cpuacct.usage"; }
else  # v2
  memory_dir=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$box_pid/cgroup")
  cpu_dir=$memory_dir
  memory_now() { cat "$memory_dir/memory.current"; }
  memory_split() { awk '$1 == "anon" || $1 == "file" || $1 == "kernel" { printf "%s %d KiB  ", $1, $2 / 1024 }' "$memory_dir/memory.stat"; }
  cpu_ns() { awk '$1 == "usage_usec" { print $2 * 1000 }' "$cpu_dir/cpu.stat"; }
fi
cpu_ns_of() { cat /proc/"$1"/task/*/schedstat | awk '{ ns += $1 } END { print ns }'; }  # its threads' time on CPU
status_kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }
pss_kib() { awk '$1 == "Pss:" { print $2 }' "/proc/$1/smaps_rollup"; }
runc_count() { { pgrep -a -x runc || true; } | grep -c -- "$box" || true; }

reading() {  # label
  printf '%s\n' "$1"
  printf '  box cgroup memory: %d KiB (%s)\n' "$(( $(memory_now) / 1024 ))" "$(memory_split)"
  printf '  box cgroup CPU time: %.1f ms\n' "$(awk -v ns="$(cpu_ns)" 'BEGIN { print ns / 1e6 }')"
  local pid
  while read -r pid; do
    printf '  in the box: pid %s %s: RSS %s KiB\n' "$pid" "$(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-70)" \
      "$(status_kib "$pid" VmRSS)"
  done < "$memory_dir/cgroup.procs"
  printf '  containerd-shim (pid %s): RSS %s KiB, PSS %s KiB, threads %s, CPU time %.1f ms\n' "$shim_pid" \
    "$(status_kib "$shim_pid" VmRSS)" "$(pss_kib "$shim_pid")" "$(status_kib "$shim_pid" Threads)" \
    "$(awk -v ns="$(cpu_ns_of "$shim_pid")" 'BEGIN { print ns / 1e6 }')"
  printf '  runc processes naming the box: %s\n' "$(runc_count)"
  printf '  pyboxd (pid %s): RSS %s KiB, CPU time %.1f ms\n' "$daemon_pid" "$(status_kib "$daemon_pid" VmRSS)" \
    "$(awk -v ns="$(cpu_ns_of "$daemon_pid")" 'BEGIN { print ns / 1e6 }')"
  printf '  pyboxd with warm_boxes 0 (pid %s): RSS %s KiB, CPU time %.1f ms\n' "$none_pid" \
    "$(status_kib "$none_pid" VmRSS)" "$(awk -v ns="$(cpu_ns_of "$none_pid")" 'BEGIN { print ns / 1e6 }')"
}

printf 'warm box %s (pid %s), %s s idle\n' "${box:0:12}" "$box_pid" "$idle_s"
box_cpu_0=$(cpu_ns); shim_0=$(cpu_ns_of "$shim_pid"); daemon_0=$(cpu_ns_of "$daemon_pid")
reading "at start"
sleep "$idle_s"
box_cpu_1=$(cpu_ns); shim_1=$(cpu_ns_of "$shim_pid"); daemon_1=$(cpu_ns_of "$daemon_pid")
reading "after $idle_s s"
[ "$(docker_engine ps -q --no-trunc --filter "label=pybox.owner=$owner" --filter status=running)" = "$box" ] ||
  echo "warm_idle_cost: the warm box changed during the idle time; the CPU figures include its replacement" >&2
awk -v b0="$box_cpu_0" -v b1="$box_cpu_1" -v s0="$shim_0" -v s1="$shim_1" -v d0="$daemon_0" -v d1="$daemon_1" \
  -v t="$idle_s" 'BEGIN {
  printf "CPU over %s s idle: box cgroup %.3f ms, containerd-shim %.3f ms, pyboxd %.3f ms (%.4f%% of a core in all)\n",
    t, (b1 - b0) / 1e6, (s1 - s0) / 1e6, (d1 - d0) / 1e6, (b1 - b0 + s1 - s0 + d1 - d0) / 1e7 / t }'
