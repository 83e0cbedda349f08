#!/usr/bin/env bash
# PID 1 of the test cluster's own PID, network and mount namespaces (cluster_up.sh starts it
# with unshare; never run it by hand). It reads $1, the cluster's ns.env (written by
# cluster_up.sh), makes the namespace's private mounts, starts etcd, the node's dockerd, the
# registry, kube-apiserver and the kubelet inside it, and the two forwards' inner halves (a
# unix socket file under the home, which the host's socat reaches). On SIGTERM it stops them in
# the reverse order, the Pods' containers with them, and exits; the kernel then ends whatever
# is left in the PID namespace.
set -u
# shellcheck source=/dev/null
source "$1"
: "${H:?}" "${RUN:?}" "${PKI:?}" "${LOGS:?}" "${ETC:?}" "${BIN:?}" "${API_PORT:?}" "${REGISTRY_PORT:?}"
: "${NODE:?}" "${NODE_IP:?}" "${PAUSE_IMAGE:?}" "${CGROUP_ROOT:?}"
log() { echo "$(date +%s.%N) ns_init: $*"; }
docker_cli() { /usr/bin/docker -H "unix://$H/docker.sock" "$@"; }

ip link set lo up
# /run, /var/lib and /etc/docker private to the namespace: the node's dockerd and the kubelet
# write there, and /run/docker.sock (below) must not be the host's.
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=755 tmpfs /var/lib
mount -t tmpfs -o mode=700 tmpfs /etc/docker
mount --bind "$RUN/varlog" /var/log
# The node's images and containers, and etcd's data, in memory: they end with the namespace
# (removing the image layers from disk took 25 s of every stop), and etcd's fsyncs cost nothing.
mkdir -p "$RUN/docker" "$RUN/etcd"
mount -t tmpfs -o mode=700,size=8g tmpfs "$RUN/docker"
mount -t tmpfs -o mode=700,size=1g tmpfs "$RUN/etcd"
# The kubelet sets these global sysctls (they are not per network namespace) to the values it
# wants: show it files that hold those values already, so the host's stay as they are.
for fake in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops \
            kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  mount --bind "$H/fake/${fake//\//.}" "/proc/sys/$fake"
done
log "namespace ready"

/usr/bin/etcd --name pybox-k8s --data-dir "$RUN/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster pybox-k8s=http://127.0.0.1:2380 --log-level warn > "$LOGS/etcd.log" 2>&1 &
etcd=$!
/usr/sbin/dockerd --config-file "$ETC/daemon.json" --data-root "$RUN/docker" --exec-root "$RUN/docker-exec" \
  -H "unix://$H/docker.sock" --pidfile "$RUN/dockerd.pid" --iptables=false --ip6tables=false \
  --bip "$NODE_IP/24" --cgroup-parent "$CGROUP_ROOT/dockerd" --log-level warn > "$LOGS/dockerd.log" 2>&1 &
dockerd=$!
/usr/bin/docker-registry serve "$ETC/registry.yml" > "$LOGS/registry.log" 2>&1 &
registry=$!
# The forwards' inner halves: the host's socat listens on 127.0.0.1:PORT of the host and
# connects to these files; here they connect to the same port number on this namespace's 127.0.0.1.
socat "UNIX-LISTEN:$H/apiserver.sock,fork,unlink-early,mode=600" "TCP:127.0.0.1:$API_PORT" 2> "$LOGS/forward-apiserver.log" &
forward_api=$!
socat "UNIX-LISTEN:$H/registry.sock,fork,unlink-early,mode=600" "TCP:127.0.0.1:$REGISTRY_PORT" 2> "$LOGS/forward-registry.log" &
forward_registry=$!

for _ in $(seq 200); do docker_cli version > /dev/null 2>&1 && break; sleep 0.1; done
log "dockerd up"
# cAdvisor (in the kubelet) probes the default docker socket 5 times, 1 s apart, before it gives
# up: point it at the node's dockerd (5 s less to node Ready).
ln -sf "$H/docker.sock" /run/docker.sock
docker_cli image inspect "$PAUSE_IMAGE" > /dev/null 2>&1 ||
  docker_cli import --change 'ENTRYPOINT ["/pause"]' "$RUN/pause.tar" "$PAUSE_IMAGE" > /dev/null
log "pause image there"
for _ in $(seq 200); do curl -sf http://127.0.0.1:2379/health > /dev/null && break; sleep 0.1; done
log "etcd up"

# The apiserver, logging to apiserver.log (appended: a restart keeps the earlier lines);
# apiserver.state says whether it runs, for apiserver.sh.
start_apiserver() {
  "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --secure-port="$API_PORT" \
    --advertise-address="$NODE_IP" --service-cluster-ip-range=10.0.0.0/24 \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --api-audiences=https://kubernetes.default.svc \
    --authorization-mode=Node,RBAC --cert-dir="$RUN/apiserver-certs" --v=1 >> "$LOGS/apiserver.log" 2>&1 &
  apiserver=$!
  echo running > "$RUN/apiserver.state"
}
start_apiserver
for _ in $(seq 600); do
  curl -sf -A pybox-k8s-ns-init --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "https://127.0.0.1:$API_PORT/readyz" > /dev/null && break
  sleep 0.1
done
log "apiserver ready"

"$BIN/kubelet" --config="$ETC/kubelet-config.yaml" --kubeconfig="$ETC/node.kubeconfig" \
  --container-runtime=docker --docker-endpoint="unix://$H/docker.sock" \
  --pod-infra-container-image="$PAUSE_IMAGE" --root-dir="$RUN/kubelet" --cert-dir="$RUN/kubelet/pki" \
  --experimental-dockershim-root-directory="$RUN/dockershim" --seccomp-profile-root="$RUN/kubelet/seccomp" \
  --volume-plugin-dir="$RUN/kubelet-plugins" --hostname-override="$NODE" --node-ip="$NODE_IP" \
  --v=2 > "$LOGS/kubelet.log" 2>&1 &
kubelet=$!
log "started: etcd=$etcd dockerd=$dockerd registry=$registry apiserver=$apiserver kubelet=$kubelet"

# Waits up to $2 tenths of a second for PID $1 to end, then kills it.
stop_process() {
  kill -TERM "$1" 2> /dev/null || return 0
  for _ in $(seq "$2"); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2> /dev/null
  wait "$1" 2> /dev/null
}
stop() {
  log "stopping"
  stop_process "$kubelet" 100
  # The Pods' containers (the kubelet leaves them running), then the node's dockerd.
  ids=$(docker_cli ps -aq 2> /dev/null)
  # shellcheck disable=SC2086  # one container id a word
  [ -n "$ids" ] && docker_cli rm -f $ids > /dev/null 2>&1
  stop_process "$forward_api" 10
  stop_process "$forward_registry" 10
  stop_process "$registry" 50
  [ -z "$apiserver" ] || stop_process "$apiserver" 100
  stop_process "$etcd" 100
  stop_process "$dockerd" 150
  # What the kubelet and dockerd mounted goes with this mount namespace; unmount it anyway,
  # deepest first, so nothing holds the home's files.
  grep -o " $RUN/[^ ]*" /proc/self/mounts | sort -r | while read -r mount; do umount -l "$mount"; done
  log "stopped; processes left:$(for p in /proc/[0-9]*; do printf ' %s:%s' "${p#/proc/}" "$(cat "$p/comm" 2> /dev/null)"; done)"
  exit 0
}
trap stop TERM INT
# apiserver.sh stop|start: a test stops the apiserver (SIGUSR1) and starts it again (SIGUSR2),
# everything else running on.
trap '[ -z "$apiserver" ] || { log "stopping the apiserver"; stop_process "$apiserver" 100; apiserver=
                              echo stopped > "$RUN/apiserver.state"; }' USR1
trap '[ -n "$apiserver" ] && kill -0 "$apiserver" 2> /dev/null || { log "starting the apiserver"; start_apiserver; }' USR2
while true; do sleep 1 & wait $!; done
