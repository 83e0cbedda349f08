#!/usr/bin/env bash
# Usage: tests/k8s/cluster_up.sh   (as root; stop it with tests/k8s/cluster_down.sh)
# Starts a real single-node Kubernetes 1.20 for the tests in $PYBOX_K8S_HOME (default
# /tmp/pybox-k8s; clusters with different homes run side by side): etcd, kube-apiserver, the
# kubelet with the node's own dockerd (dockershim) and Debian's docker-registry, all in a PID,
# network and mount namespace of their own (ns_init.sh is its PID 1), so that the kubelet
# changes none of the host's sysctls, oom_score_adj values or mounts. The host reaches the
# apiserver and the registry through forwards (socat: host 127.0.0.1:PORT -> a unix socket file
# in the home -> the namespace's 127.0.0.1:PORT, the same port on both sides), and the node's
# dockerd through its socket file.
#
# When it returns 0 the node is Ready and $PYBOX_K8S_HOME/cluster.env holds what the tests use
# (docs/testing.md, "The Kubernetes test cluster"): K8S_SERVER, K8S_ADMIN_KUBECONFIG,
# K8S_NOBODY_KUBECONFIG, K8S_NAMESPACE, K8S_NODE, K8S_REGISTRY, K8S_TEST_IMAGE, K8S_KUBECTL,
# K8S_DOCKER_SOCK, K8S_NS_PID, and K8S_CA, K8S_SECCOMP_PROFILE, K8S_SECCOMP_ROOT and K8S_POD_PIDS_LIMIT.
#
# Inputs: kube-apiserver, kubelet and pause (binaries.sh says where from); Debian's kubectl
# (kubectl.sh); the suite's stdlib image tar (PYBOX_K8S_IMAGE_TAR, else the newest stdlib tar in
# $PYBOX_IMAGE_TAR_CACHE, default ~/.cache/pybox-test/image-tars; with none there and
# PYBOX_BUILD set to a build folder, that build makes it with tests/integration/prebuild_images.sh).
set -euo pipefail
: "${PYBOX_K8S_HOME:=/tmp/pybox-k8s}"
export PYBOX_K8S_HOME
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/k8s/common.sh
source "$here/common.sh"
source_dir=$(cd "$here/../.." && pwd)
started=$EPOCHREALTIME
say() { awk -v what="$*" -v from="$started" -v to="$EPOCHREALTIME" 'BEGIN { printf "cluster_up: %s (%.1f s)\n", what, to - from }'; }
fail() { echo "cluster_up: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (namespaces, cgroups, the node's dockerd)"
for tool in etcd docker-registry dockerd docker socat openssl xz ip unshare nsenter curl; do
  command -v "$tool" > /dev/null || fail "$tool is missing: run scripts/install-deps.sh"
done

# Whatever an earlier cluster of this home left (stopped or crashed) goes first.
"$here/cluster_down.sh" > /dev/null || fail "an earlier cluster in $PYBOX_K8S_HOME could not be cleaned up"

H=$PYBOX_K8S_HOME
mkdir -p "$H"
H=$(cd "$H" && pwd -P)
chmod 700 "$H"
# The longest unix socket path under the home (the node dockerd's containerd's) must fit in 107 bytes.
longest="$H/run/docker-exec/containerd/containerd-debug.sock"
[ ${#longest} -le 107 ] || fail "PYBOX_K8S_HOME $H is too long: $longest must fit in 107 bytes"
rm -rf "${H:?}/run" "${H:?}/logs" "${H:?}/pki" "${H:?}/etc" "${H:?}/fake" "${H:?}/bin" "${H:?}/kubectl-cache" \
  "${H:?}/cluster.env"
RUN=$H/run LOGS=$H/logs PKI=$H/pki ETC=$H/etc
mkdir -p "$RUN/varlog" "$RUN/registry" "$RUN/kubelet/seccomp" "$LOGS" "$ETC" "$H/fake"
# Unless it gets to the end: each log's last lines, and whatever was started is stopped again.
up=no
# shellcheck disable=SC2154  # f is the trap's own loop variable
trap '[ "$up" = yes ] || { echo "cluster_up: failed; the last lines of each log in $LOGS:" >&2
      for f in "$LOGS"/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 8 "$f" >&2; }; done
      "$here/cluster_down.sh" >&2 || true; }' EXIT

BIN=$H/bin
"$here/binaries.sh" "$BIN"
KUBECTL=$("$here/kubectl.sh")

# The test image: the suite's stdlib image, as the project's image recipe built it.
newest_stdlib_tar() {
  find "$1" -maxdepth 1 -name 'stdlib-*.tar' -printf '%T@ %p\n' 2> /dev/null | sort -rn | head -n 1 | cut -d' ' -f2-
}
image_tar=${PYBOX_K8S_IMAGE_TAR:-}
if [ -z "$image_tar" ]; then
  tar_cache=${PYBOX_IMAGE_TAR_CACHE:-$HOME/.cache/pybox-test/image-tars}
  image_tar=$(newest_stdlib_tar "$tar_cache")
  if [ -z "$image_tar" ] && [ -n "${PYBOX_BUILD:-}" ]; then
    say "no stdlib image tar in $tar_cache: building it with $PYBOX_BUILD's pyboxd"
    PYBOX_IMAGE_TAR_CACHE=$tar_cache PYBOX_FIXTURE_STDLIB_ONLY=1 \
      "$source_dir/tests/integration/prebuild_images.sh" "$PYBOX_BUILD" > "$LOGS/prebuild_images.log" 2>&1
    image_tar=$(newest_stdlib_tar "$tar_cache")
  fi
  [ -n "$image_tar" ] || fail "no stdlib image tar in $tar_cache: build one with" \
    "tests/integration/prebuild_images.sh BUILD_DIR (or set PYBOX_BUILD, or PYBOX_K8S_IMAGE_TAR)"
fi
[ -f "$image_tar" ] || fail "$image_tar is not a file"
# Tagged with the recipe's SHA-256 from the cache's name for it (NAME-<recipe SHA-256>.tar), as
# pyboxd tags it; another tar (PYBOX_K8S_IMAGE_TAR) is tagged "given".
image_tag=$(basename "$image_tar" .tar)
image_tag=${image_tag##*-}
[[ $image_tag =~ ^[0-9a-f]{64}$ ]] && image_tag=${image_tag:0:12} || image_tag=given
TEST_IMAGE="pybox-k8s/stdlib:$image_tag"

# Free ports on the host; the namespace is empty, so the same numbers are free there.
read -r API_PORT REGISTRY_PORT < <(/usr/bin/python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
NODE=pybox-k8s-node
NODE_IP=172.17.0.1
PAUSE_IMAGE=pybox-k8s/pause:3.4.1
# The kubelet puts its kubepods and the node's dockerd its containers under this home's own
# cgroup; cluster_down.sh removes exactly that tree.
CGROUP_ROOT=$(cgroup_root "$H")
SECCOMP_PROFILE=pybox-seccomp-v2.json
# The node's pids limit per Pod: the seed's figure for the stdlib image unless the caller asks another.
POD_PIDS_LIMIT=${PYBOX_K8S_POD_PIDS_LIMIT:-32}
[[ $POD_PIDS_LIMIT =~ ^(-1|[0-9]+)$ ]] || fail "PYBOX_K8S_POD_PIDS_LIMIT must be a number (or -1: none), not $POD_PIDS_LIMIT"

"$here/make_pki.sh" "$PKI" "$NODE" "$NODE_IP"

# kubeconfig FILE USER: a kubeconfig for 127.0.0.1:API_PORT (the host's forward, and the
# apiserver itself inside the namespace) with USER's client certificate.
kubeconfig() {
  cat > "$1" << EOF
apiVersion: v1
kind: Config
clusters:
- name: pybox-k8s
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: pybox-k8s
  context: {cluster: pybox-k8s, user: $2}
current-context: pybox-k8s
EOF
}
kubeconfig "$H/admin.kubeconfig" admin
kubeconfig "$H/nobody.kubeconfig" nobody
kubeconfig "$ETC/node.kubeconfig" node

cat > "$ETC/kubelet-config.yaml" << EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failSwapOn: false
podPidsLimit: $POD_PIDS_LIMIT
makeIPTablesUtilChains: false
clusterDomain: cluster.local
containerLogMaxSize: 10Mi
maxPods: 30
# Node Ready about 2 s after registering, not 10 s.
nodeStatusUpdateFrequency: 2s
# A test machine's disk is shared: the kubelet must neither evict the test's Pods nor delete
# the imported images because other work filled it.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
featureGates:
  SizeMemoryBackedVolumes: true
EOF

# The node's dockerd runs containers through runc-clamp (root here lacks CAP_SYS_RESOURCE, so
# the kubelet's negative oom_score_adj would fail the container).
install -m 755 "$here/runc-clamp" "$ETC/runc-clamp"
printf '{"runtimes": {"runc-clamp": {"path": "%s"}}, "default-runtime": "runc-clamp"}\n' "$ETC/runc-clamp" \
  > "$ETC/daemon.json"

# Debian's docker-registry: its packaged config turns on htpasswd auth and listens on every
# address; this one listens on the namespace's 127.0.0.1 only, plain HTTP, no auth.
cat > "$ETC/registry.yml" << EOF
version: 0.1
log: {level: warn, fields: {service: registry}}
storage:
  filesystem: {rootdirectory: $RUN/registry}
  delete: {enabled: true}
http: {addr: "127.0.0.1:$REGISTRY_PORT"}
EOF

# The values the kubelet sets these global sysctls to (ns_init.sh mounts them over the real ones).
echo 1 > "$H/fake/vm.overcommit_memory"
echo 0 > "$H/fake/vm.panic_on_oom"
echo 10 > "$H/fake/kernel.panic"
echo 1 > "$H/fake/kernel.panic_on_oops"
echo 1000000 > "$H/fake/kernel.keys.root_maxkeys"
echo 25000000 > "$H/fake/kernel.keys.root_maxbytes"

# PyBox's seccomp profile where the kubelet finds Localhost profiles (<root-dir>/seccomp).
install -m 644 "$source_dir/proto/seccomp/$SECCOMP_PROFILE" "$RUN/kubelet/seccomp/$SECCOMP_PROFILE"

# The pause image's only file: the static pause.
pause_root=$(mktemp -d)
install -m 755 "$BIN/pause" "$pause_root/pause"
tar -C "$pause_root" -cf "$RUN/pause.tar" --owner=0 --group=0 pause
rm -rf "$pause_root"

for hierarchy in $(cgroup_hierarchies); do
  mkdir -p "$hierarchy$CGROUP_ROOT"
  # cpuset (v1): a new cgroup has no CPUs and no memory nodes until it is given its parent's.
  if [ -f "$hierarchy/cpuset.cpus" ] && [ -f "$hierarchy$CGROUP_ROOT/cpuset.cpus" ]; then
    cat "$hierarchy/cpuset.cpus" > "$hierarchy$CGROUP_ROOT/cpuset.cpus"
    cat "$hierarchy/cpuset.mems" > "$hierarchy$CGROUP_ROOT/cpuset.mems"
  fi
done

cat > "$H/ns.env" << EOF
H=$H
RUN=$RUN
PKI=$PKI
LOGS=$LOGS
ETC=$ETC
BIN=$BIN
API_PORT=$API_PORT
REGISTRY_PORT=$REGISTRY_PORT
NODE=$NODE
NODE_IP=$NODE_IP
PAUSE_IMAGE=$PAUSE_IMAGE
CGROUP_ROOT=$CGROUP_ROOT
EOF

/usr/bin/python3 "$here/host_state.py" snapshot "$H/host-before.json"

# The namespaces. unshare is in a session of its own, so no terminal signal reaches it.
setsid unshare --pid --net --mount --fork --mount-proc --propagation private \
  "$here/ns_init.sh" "$H/ns.env" > "$LOGS/ns_init.log" 2>&1 < /dev/null &
unshare_pid=$!
echo "$unshare_pid" > "$H/unshare.pid"
ns_pid=
for _ in $(seq 100); do
  ns_pid=$(cut -d' ' -f1 "/proc/$unshare_pid/task/$unshare_pid/children" 2> /dev/null || true)
  [ -n "$ns_pid" ] && break
  sleep 0.05
done
[ -n "$ns_pid" ] || fail "unshare started no namespace"
echo "$ns_pid" > "$H/ns_init.pid"
# The namespaces' identities: cluster_down.sh finds every process left in them by these, even
# after a crash that lost the PID files' processes.
for ns in pid mnt net; do readlink "/proc/$ns_pid/ns/$ns"; done > "$H/namespaces"
say "namespaces started (ns_init is host PID $ns_pid)"

# The host's halves of the forwards, each in a session (process group) of its own.
: > "$H/forwards.pid"
for forward in "$API_PORT apiserver" "$REGISTRY_PORT registry"; do
  read -r port name <<< "$forward"
  setsid socat "TCP-LISTEN:$port,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$H/$name.sock" \
    > /dev/null 2> "$LOGS/forward-host-$name.log" < /dev/null &
  echo $! >> "$H/forwards.pid"
done

# The test image goes into the node's dockerd while the apiserver and the kubelet start.
docker_cli() { /usr/bin/docker -H "unix://$H/docker.sock" "$@"; }
for _ in $(seq 200); do docker_cli version > /dev/null 2>&1 && break; sleep 0.1; done
docker_cli import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' "$image_tar" "$TEST_IMAGE" > "$LOGS/import-test-image.log" 2>&1 &
import_pid=$!

kubectl() { "$KUBECTL" --kubeconfig "$H/admin.kubeconfig" --cache-dir "$H/kubectl-cache" --request-timeout 10s "$@"; }
for _ in $(seq 600); do
  kubectl get --raw /readyz > /dev/null 2>&1 && break
  kill -0 "$ns_pid" 2> /dev/null || fail "the namespace's init ended"
  sleep 0.1
done
kubectl get --raw /readyz > /dev/null || fail "the apiserver was not ready within 60 s"
say "apiserver ready through 127.0.0.1:$API_PORT"

# Before any logs, attach or node-proxy request (the kubelet caches a denial for 30 s): the
# apiserver's client for the kubelet may use the kubelet's API. No controller-manager runs, so
# the namespaces' default ServiceAccounts are made here (the admission plugin wants them).
kubectl apply -f - > /dev/null << EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: pybox-test-apiserver-kubelet-api-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kubelet-api-admin"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver-kubelet-client}]
---
apiVersion: v1
kind: Namespace
metadata: {name: pybox-test}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: pybox-test}
EOF
say "kubelet API access, namespace pybox-test and the default ServiceAccounts made"

wait "$import_pid" || fail "importing $image_tar into the node's dockerd failed: $(cat "$LOGS/import-test-image.log")"
say "test image $TEST_IMAGE imported from $image_tar"

for _ in $(seq 1200); do
  ready=$(kubectl get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2> /dev/null || true)
  [ "$ready" = True ] && break
  kill -0 "$ns_pid" 2> /dev/null || fail "the namespace's init ended"
  sleep 0.1
done
[ "$ready" = True ] || fail "node $NODE was not Ready within 120 s"
say "node $NODE Ready"

cat > "$H/cluster.env.partial" << EOF
K8S_SERVER=https://127.0.0.1:$API_PORT
K8S_ADMIN_KUBECONFIG=$H/admin.kubeconfig
K8S_NOBODY_KUBECONFIG=$H/nobody.kubeconfig
K8S_NAMESPACE=pybox-test
K8S_NODE=$NODE
K8S_REGISTRY=127.0.0.1:$REGISTRY_PORT
K8S_TEST_IMAGE=$TEST_IMAGE
K8S_KUBECTL=$KUBECTL
K8S_DOCKER_SOCK=$H/docker.sock
K8S_NS_PID=$ns_pid
K8S_CA=$PKI/ca.crt
K8S_SECCOMP_PROFILE=$SECCOMP_PROFILE
K8S_SECCOMP_ROOT=$RUN/kubelet/seccomp
K8S_POD_PIDS_LIMIT=$POD_PIDS_LIMIT
EOF
mv "$H/cluster.env.partial" "$H/cluster.env"
up=yes
say "up: $H/cluster.env"
