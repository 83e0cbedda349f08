#!/usr/bin/env bash
# Benchmark: `pybox exec` of print(6*7) through an ssh engine against the same engine by its unix
# socket, interleaved. Two daemons of their own (tests/bench/side_daemons.sh) run every box on
# engine2 (local_engine false; the suite engine, their engine_socket, is where the images come
# from): "unix" names engine2's socket, "ssh" reaches it through the
# fixture's sshd on 127.0.0.1 (ssh_up.sh, host key pinned); so only the transport differs. Each
# round runs one of each, in alternating order; prints medians, minimums and the ratio.
# Needs the suite's fixture (engine_up), engine2 and ssh up:
#   PYBOX_HOME=/tmp/pybox-test-<hash> PYBOX_ENGINE2_DIR=...-engine2 PYBOX_SSH_DIR=...-ssh \
#     tests/bench/exec_ssh_vs_local.sh [ROUNDS=30]
set -euo pipefail
rounds=${1:-30}
: "${PYBOX_ENGINE2_DIR:?the folder of the second dockerd}" "${PYBOX_SSH_DIR:?the folder of the test sshd}"
source "$(dirname "$0")/side_daemons.sh"
trap stop_daemons EXIT
# shellcheck source=/dev/null
. "$PYBOX_SSH_DIR/ssh.env"

start_daemon unix "{\"engine_socket\": \"$home/engine/docker.sock\", \"local_engine\": false, \"engines\": [{\"id\": \"engine2\", \"url\": \"unix://$ENGINE_SOCKET\"}]}"
start_daemon ssh "{\"engine_socket\": \"$home/engine/docker.sock\", \"local_engine\": false, \"engines\": [{\"id\": \"engine2\", \"url\": \"ssh://$USER@127.0.0.1:$PORT\",
  \"engine_socket\": \"$ENGINE_SOCKET\", \"identity_file\": \"$USER_KEY\", \"host_key\": \"$HOST_KEY\"}]}"

timed_run() {  # name: prints "begun:ended" of one run (seconds), client included
  local begun=$EPOCHREALTIME
  printf 'print(6*7)\n' | PYBOX_HOME="$home-bench-$1" "$bin/pybox" exec - > /dev/null 2>&1
  echo "$begun:$EPOCHREALTIME"
}

timed_run unix > /dev/null  # one warm-up each, not counted
timed_run ssh > /dev/null
unix_times=() ssh_times=()
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then
    unix_times+=("$(timed_run unix)"); ssh_times+=("$(timed_run ssh)")
  else
    ssh_times+=("$(timed_run ssh)"); unix_times+=("$(timed_run unix)")
  fi
done
python3 - "${unix_times[*]}" "${ssh_times[*]}" "$rounds" << 'PY'
import statistics, sys
def durations(arg):
    return [float(end) - float(begin) for begin, end in (pair.split(":") for pair in arg.split())]
unix, ssh = durations(sys.argv[1]), durations(sys.argv[2])
print(f"pybox exec of print(6*7), {sys.argv[3]} interleaved rounds, every box on engine2")
print(f"{'transport':<28} {'median':>8} {'min':>8}")
print(f"{'unix socket':<28} {statistics.median(unix):8.3f} {min(unix):8.3f}")
print(f"{'ssh (libssh2, socat)':<28} {statistics.median(ssh):8.3f} {min(ssh):8.3f}")
print(f"ratio ssh / unix (medians): {statistics.median(ssh) / statistics.median(unix):.2f}")
PY
