#!/usr/bin/env bash
# ctest fixture cleanup: stops the sshd that ssh_up.sh started (by its pid file) and every
# process below it (the per-connection sshd processes and their commands), children first.
# With --kill, SIGKILL at once and the files kept (the tests use it to drop the host mid-request);
# with --signal STOP or --signal CONT, only that signal to the same processes (a frozen host).
set -uo pipefail
: "${PYBOX_SSH_DIR:?}"
pid_file="$PYBOX_SSH_DIR/sshd.pid"
[ -s "$pid_file" ] || exit 0
signal=TERM
[ "${1:-}" = --kill ] && signal=KILL
listener=$(cat "$pid_file")
# Only a pid that is still our sshd (the pid file may be stale).
[ "$(readlink "/proc/$listener/exe" 2> /dev/null)" = /usr/sbin/sshd ] || { rm -f "$pid_file"; exit 0; }
tree() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do tree "$child"; done
  echo "$1"
}
pids=$(tree "$listener")
if [ "${1:-}" = --signal ]; then
  kill "-${2:?}" $pids
  exit 0
fi
# The listener first: while a session is killed, a client that reconnects at once (the daemon
# does) must find nobody listening, not a listener that forks it a session outside $pids.
kill "-$signal" "$listener" 2> /dev/null
kill "-$signal" $pids 2> /dev/null
for _ in $(seq 1 50); do
  alive=0
  for pid in $pids; do kill -0 "$pid" 2> /dev/null && alive=1; done
  [ "$alive" = 0 ] && break
  sleep 0.1
done
kill -KILL $pids 2> /dev/null
rm -f "$pid_file"
exit 0
