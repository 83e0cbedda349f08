#!/usr/bin/env bash
# Benchmark (issue 10, warm boxes): print(6*7) four ways in N interleaved rounds, then two
# back-to-back series of M runs; prints medians, p95 and minimums, the ratios the issue sets
# targets for, and where the pybox runs spent their time (the receipts' lifecycle).
#   pybox warm   a daemon of its own with the default config (warm_boxes 1); before each warm
#                run, and after it, the script waits until the daemon's next warm box runs
#                (polling the engine for a running box of that daemon), so every measured run
#                finds one and the other rows do not share the CPU with its making
#   pybox cold   a daemon of its own with "warm_boxes": 0
#   docker run   `docker run --rm -i` with the same image (by ID), limits and engine
#   epicbox      with PYBOX_BENCH_EPICBOX=<epicbox checkout>: epicbox.run() in one Python
#                process (epicbox_runs.py; the interpreter's start is not counted) on the same
#                engine and image, with the limits epicbox can set
# The back-to-back series issue each run the moment the previous answer arrives (the loop a
# developer's tool produces), warm daemon first, then cold; for each series the machine's busy CPU
# time (all processes, /proc/stat) per run, which bounds how fast the cores can go through them
# (the warm series' count includes the making of the box after its last run). Wall time of the whole command,
# client included, except epicbox (library call). Both daemons use the suite's engine and
# images, keep the watcher on, and are stopped at the end. Needs the suite's fixture up:
#   PYBOX_HOME=/tmp/pybox-test-<hash> [PYBOX_BENCH_EPICBOX=/tmp/epicbox] \
#     tests/bench/warm_vs_cold.sh [N=30] [M=20]
# PYBOX_BENCH_WARM_BOXES=K gives the warm daemon "warm_boxes": K (default: the config's default).
# PYBOX_BENCH_EPICBOX_PYTHON names the interpreter with epicbox's dependencies (default
# /usr/bin/python3, Debian's python3-docker, python3-structlog and python3-dateutil).
set -euo pipefail
rounds=${1:-30}
series=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/side_daemons.sh"
epicbox_checkout=${PYBOX_BENCH_EPICBOX:-}
epicbox_python=${PYBOX_BENCH_EPICBOX_PYTHON:-/usr/bin/python3}
box_limits stdlib
image=$(image_id stdlib)
[ -n "$image" ] || { echo "no stdlib image recorded in $home/images.json: run pybox setup" >&2; exit 1; }
work=$(mktemp -d)
epicbox_pid=
trap 'stop_daemons; if [ -n "$epicbox_pid" ]; then kill "$epicbox_pid" 2> /dev/null || true; fi; rm -rf "$work"' EXIT

start_daemon warm "{\"engine_socket\": \"$engine_socket\"${PYBOX_BENCH_WARM_BOXES:+, \"warm_boxes\": $PYBOX_BENCH_WARM_BOXES}}"
start_daemon cold "{\"engine_socket\": \"$engine_socket\", \"warm_boxes\": 0}"
warm_home="$home-bench-warm"
cold_home="$home-bench-cold"
warm_owner=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["installation_id"])' \
  "$warm_home/installation.json")
if [ -n "$epicbox_checkout" ]; then
  coproc epicbox { DOCKER_HOST="unix://$engine_socket" "$epicbox_python" "$here/epicbox_runs.py" \
    "$epicbox_checkout" "unix://$engine_socket" "$image" 128 32 30; }
  epicbox_pid=$epicbox_PID
fi

times="$work/times"  # one line a run: kind, start, end (EPOCHREALTIME), receipt file or "-"
receipts=0
pybox_run() {  # kind, daemon folder: one timed run, its receipt kept
  local receipt="$work/$((++receipts)).json" begun ended
  begun=$EPOCHREALTIME
  printf 'print(6*7)\n' | PYBOX_HOME="$2" "$bin/pybox" exec --image stdlib --timeout 30 - --json > "$receipt" 2> /dev/null || true
  ended=$EPOCHREALTIME
  printf '%s %s %s %s\n' "$1" "$begun" "$ended" "$receipt" >> "$times"
}
docker_run() {
  local begun ended
  begun=$EPOCHREALTIME
  printf 'print(6*7)\n' | "$docker_cli" -H "unix://$engine_socket" run --rm -i "${box_docker_flags[@]}" \
    "${box_limits_flags[@]}" --tmpfs "/tmp:size=16777216,noexec,nodev,nosuid" \
    "$image" timeout -s KILL 31 python3 -I -B -u - > /dev/null 2>&1 || true
  ended=$EPOCHREALTIME
  printf 'docker %s %s -\n' "$begun" "$ended" >> "$times"
}
epicbox_run() {  # the library times its own call
  local took ok
  echo run >&"${epicbox[1]}"
  read -r took ok <&"${epicbox[0]}"
  printf 'epicbox 0 %s %s\n' "$took" "$ok" >> "$times"
}
wait_for_warm_box() {  # [answer time]: until the warm daemon's next box runs (at most 10 s)
  local _
  for _ in $(seq 1 200); do
    if [ -n "$("$docker_cli" -H "unix://$engine_socket" ps -q --filter "label=pybox.owner=$warm_owner" \
      --filter status=running)" ]; then
      if [ $# -gt 0 ]; then printf 'ready %s %s -\n' "$1" "$EPOCHREALTIME" >> "$times"; fi
      return 0
    fi
    sleep 0.02
  done
  echo "warm_vs_cold: no warm box running after 10 s" >&2
}

# One uncounted run each: caches, the engine's first start of the image.
pybox_run skip "$warm_home"; pybox_run skip "$cold_home"; docker_run
if [ -n "$epicbox_checkout" ]; then epicbox_run; fi
: > "$times"
wait_for_warm_box
for _ in $(seq 1 "$rounds"); do
  pybox_run warm "$warm_home"
  wait_for_warm_box "$(tail -n 1 "$times" | cut -d' ' -f3)"
  pybox_run cold "$cold_home"
  docker_run
  if [ -n "$epicbox_checkout" ]; then epicbox_run; fi
done
busy_cpu_s() {  # the machine's busy CPU time so far, all cores, in seconds (/proc/stat)
  awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}
series_cpu() {  # kind, busy CPU seconds at its start, at its end
  printf 'cpu %s %s %s\n' "$2" "$3" "$1" >> "$times"
}
cpu_begun=$(busy_cpu_s)
for _ in $(seq 1 "$series"); do pybox_run warm-b2b "$warm_home"; done
wait_for_warm_box  # so that the cold series does not share the CPU with the warm box's making
series_cpu warm-b2b "$cpu_begun" "$(busy_cpu_s)"
cpu_begun=$(busy_cpu_s)
for _ in $(seq 1 "$series"); do pybox_run cold-b2b "$cold_home"; done
series_cpu cold-b2b "$cpu_begun" "$(busy_cpu_s)"

python3 "$here/warm_vs_cold_report.py" "$times" "$rounds" "$series" "${PYBOX_BENCH_WARM_BOXES:-default}" "$(nproc)"
