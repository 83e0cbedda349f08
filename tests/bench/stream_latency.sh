#!/usr/bin/env bash
# Benchmark: how long a line printed with print(..., flush=True) in the box takes to reach the
# client, three ways, interleaved: the socket API's streamed POST /v1/runs (read event by
# event), `pybox exec` (its stdout read line by line), and `docker run --rm -i` with the same
# image, limits and engine. The program prints the host's wall clock (the box shares its
# kernel's clock) five times, 100 ms apart; each line's latency is the reader's wall clock when
# the line arrived minus the one printed. Prints the median, p95 and maximum over N runs (5
# lines each) for each way. Needs a running pyboxd with a verified engine and a built stdlib
# image (PYBOX_HOME=/tmp/pybox-test-<hash> while the suite's fixture is up).
# Usage: tests/bench/stream_latency.sh [N]   (default 30)
set -euo pipefail
runs=${1:-30}
export PYBOX_HOME=${PYBOX_HOME:-$HOME/.pybox/runtime}
source "$(dirname "$0")/side_daemons.sh"
box_limits stdlib
image=$(image_id stdlib)
[ -n "$image" ] || { echo "no stdlib image recorded in $home/images.json: run pybox setup" >&2; exit 1; }
exec python3 "$(dirname "$0")/stream_latency.py" "$runs" "$home/pyboxd.sock" "$bin/pybox" \
  "$docker_cli" -H "unix://$engine_socket" run --rm -i "${box_docker_flags[@]}" "${box_limits_flags[@]}" \
  --tmpfs "/tmp:size=16777216,noexec,nodev,nosuid" "$image" timeout -s KILL 31 python3 -I -B -u -
