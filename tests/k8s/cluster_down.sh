#!/usr/bin/env bash
# Usage: tests/k8s/cluster_down.sh   (as root)
# Stops the test cluster of $PYBOX_K8S_HOME (default /tmp/pybox-k8s) that cluster_up.sh started,
# or cleans up after one that crashed: the host's forwards, then SIGTERM to the namespace's init
# (ns_init.sh stops the kubelet, the Pods' containers, the registry, the apiserver, etcd and the
# node's dockerd; SIGKILL after 60 s ends the whole PID namespace). Then it checks that no process
# is left in the cluster's PID, mount or network namespace (killing any it finds), that the host
# has no mount under the home, and removes the cgroups the kubelet and the node's dockerd made
# under the home's cgroup, deepest first, and the runtime state (etcd, the node's images, the
# registry's blobs). Logs and certificates stay for reading. Exits 1, saying what, if anything
# was left: a process that outlived the namespace's init (killed then), or what could not be
# removed. Running it again, or with nothing to stop, does nothing more.
set -uo pipefail
# shellcheck source=tests/k8s/common.sh
source "$(dirname "$0")/common.sh"
: "${PYBOX_K8S_HOME:=/tmp/pybox-k8s}"
[ -d "$PYBOX_K8S_HOME" ] || exit 0
H=$(cd "$PYBOX_K8S_HOME" && pwd -P)
left=()
started=$EPOCHREALTIME
note() { awk -v what="$*" -v from="$started" -v to="$EPOCHREALTIME" 'BEGIN { printf "cluster_down: %s (%.1f s)\n", what, to - from }'; }

# A PID file's process, if it is still the one the file names (its command line mentions WORD).
live_pid() {
  local pid
  pid=$(cat "$1" 2> /dev/null) || return 1
  [ -n "$pid" ] && tr '\0' ' ' 2> /dev/null < "/proc/$pid/cmdline" | grep -qF -- "$2" && echo "$pid"
}

# The host's forwards (socat, each the leader of its own process group, with a child per connection).
while read -r pid; do
  if tr '\0' ' ' 2> /dev/null < "/proc/$pid/cmdline" | grep -qF -- "$H/"; then kill -TERM -- "-$pid" 2> /dev/null; fi
done < <(cat "$H/forwards.pid" 2> /dev/null)

# The recorded namespaces are this cluster's only while its init lives: once the init is gone
# the kernel has ended its PID namespace, and the numbers may name someone else's namespaces later.
namespaces_valid=no
if ns_pid=$(live_pid "$H/ns_init.pid" ns_init.sh); then
  [ "$(readlink "/proc/$ns_pid/ns/pid")" = "$(head -n 1 "$H/namespaces" 2> /dev/null)" ] && namespaces_valid=yes
  kill -TERM "$ns_pid"
  for _ in $(seq 600); do [ -d "/proc/$ns_pid" ] || break; sleep 0.1; done
  if [ -d "/proc/$ns_pid" ]; then
    note "ns_init (host PID $ns_pid) did not stop within 60 s: SIGKILL, which ends its PID namespace"
    kill -KILL "$ns_pid"
    for _ in $(seq 50); do [ -d "/proc/$ns_pid" ] || break; sleep 0.1; done
  fi
  if [ -d "/proc/$ns_pid" ]; then
    left+=("the namespace's init, host PID $ns_pid, after SIGTERM and SIGKILL")
  else
    note "the namespace's init (host PID $ns_pid) ended"
  fi
fi
if unshare_pid=$(live_pid "$H/unshare.pid" ns_init.sh); then
  for _ in $(seq 50); do [ -d "/proc/$unshare_pid" ] || break; sleep 0.1; done
  [ ! -d "/proc/$unshare_pid" ] || left+=("unshare, host PID $unshare_pid, 5 s after its child ended")
fi

# Every process in one of the cluster's namespaces, as "PID:COMMAND" (none once it stopped; a
# test's nsenter left behind, or a process that ignored the init's end, may be there).
in_namespaces() {
  local pids
  pids=$(stat -c '%n %N' /proc/[0-9]*/ns/pid /proc/[0-9]*/ns/mnt /proc/[0-9]*/ns/net 2> /dev/null |
         grep -F -f <(sed "s/.*/'&'/" "$H/namespaces") | cut -d/ -f3 | sort -un)
  for pid in $pids; do echo "$pid:$(cat "/proc/$pid/comm" 2> /dev/null)"; done
}
remaining=
[ "$namespaces_valid" = yes ] && remaining=$(in_namespaces)
if [ -n "$remaining" ]; then
  # Nothing may outlive the init: whatever did (a test's nsenter, a process that escaped the
  # stop) is killed, and this run fails so that it is seen.
  left+=("processes in the cluster's namespaces after its init ended (killed): ${remaining//$'\n'/ }")
  for entry in $remaining; do kill -KILL "${entry%%:*}" 2> /dev/null; done
  for _ in $(seq 50); do remaining=$(in_namespaces); [ -z "$remaining" ] && break; sleep 0.1; done
  [ -z "$remaining" ] || left+=("processes in the cluster's namespaces that SIGKILL did not end: ${remaining//$'\n'/ }")
fi

# Mounts of the home on the host (the namespace's own went with it; the host must have none).
host_mounts=$(grep -o " $H/[^ ]*" /proc/1/mountinfo | sort -r)
if [ -n "$host_mounts" ]; then
  note "host mounts under $H: ${host_mounts//$'\n'/ }; unmounting"
  while read -r mount; do umount -l "$mount"; done <<< "$host_mounts"
  host_mounts=$(grep -o " $H/[^ ]*" /proc/1/mountinfo)
  [ -z "$host_mounts" ] || left+=("host mounts: ${host_mounts//$'\n'/ }")
fi

# The home's cgroup tree in every hierarchy (kubepods and its Pods' cgroups, the node dockerd's),
# deepest first. A cgroup whose last process just ended can refuse rmdir for a moment: retry.
cgroup_root=$(cgroup_root "$H")
hierarchies=$(cgroup_hierarchies)
for _ in $(seq 50); do
  trees=$(for hierarchy in $hierarchies; do [ -d "$hierarchy$cgroup_root" ] && echo "$hierarchy$cgroup_root"; done)
  [ -z "$trees" ] && break
  for tree in $trees; do find "$tree" -depth -type d -exec rmdir {} + 2> /dev/null; done
  sleep 0.1
done
note "cgroups under $cgroup_root removed"
# shellcheck disable=SC2086  # one cgroup tree a word
[ -z "$trees" ] || left+=("cgroups: $(find $trees -type d | head -n 20 | tr '\n' ' ')")

if [ ${#left[@]} -gt 0 ]; then
  for what in "${left[@]}"; do echo "cluster_down: LEFT: $what" >&2; done
  exit 1
fi
rm -rf "$H/run" "$H/kubectl-cache"
rm -f "$H/cluster.env" "$H/ns_init.pid" "$H/unshare.pid" "$H/forwards.pid" "$H/namespaces" \
  "$H"/*.sock
note "down"
exit 0
