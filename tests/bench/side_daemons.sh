# Sourced by the benchmarks: daemons of their own beside the suite's ($PYBOX_HOME, whose images
# they record), each in $PYBOX_HOME-bench-NAME with its own config.json, started and verified
# (`pybox vm start`, which copies the images to an engine that lacks them) by start_daemon and
# stopped, with their folders removed, by stop_daemons (the caller's EXIT trap). Also what a
# `docker run --rm -i` needs to run like a box on the same engine: the recorded image ID
# (image_id), the box policy's flags (box_docker_flags) and an image's limits (box_limits).
: "${PYBOX_HOME:?the runtime folder of the suite}"
bin=${PYBOX_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin}
home=$PYBOX_HOME
engine_socket="$home/engine/docker.sock"
docker_cli=${DOCKER_CLI:-/usr/bin/docker}
seccomp_profile=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/proto/seccomp/pybox-seccomp-v2.json
# Everything of the box policy but the limits and the /tmp tmpfs (its size varies by run).
box_docker_flags=(--network none --user 10000:10000 --cap-drop ALL --security-opt no-new-privileges --read-only
                  --security-opt "seccomp=$seccomp_profile" --ulimit core=0:0 --ulimit nofile=128:128
                  --log-driver none)

load_cluster_env() {  # the test cluster's cluster.env ($PYBOX_K8S_HOME, default /tmp/pybox-k8s): for the kube benchmarks, which run the pybox in $PYBOX_BIN
  : "${PYBOX_BIN:?the bin folder of a build}"
  export PYBOX_K8S_HOME=${PYBOX_K8S_HOME:-/tmp/pybox-k8s}
  # shellcheck source=/dev/null
  . "$PYBOX_K8S_HOME/cluster.env"
}

image_id() {  # name: the image ID $PYBOX_HOME/images.json records for it, or nothing
  python3 -c 'import json, sys
print(next((i["image_id"] for i in json.load(open(sys.argv[1]))["images"] if i["name"] == sys.argv[2]), ""))' \
    "$home/images.json" "$1"
}

box_limits() {  # name: sets box_limits_flags to the image's memory, pids and CPU limits
  case "$1" in
    stdlib) box_limits_flags=(--memory 128m --memory-swap 128m --pids-limit 32 --cpus 0.5) ;;
    data) box_limits_flags=(--memory 512m --memory-swap 512m --pids-limit 64 --cpus 1) ;;
    *) echo "no limits known for image $1" >&2; return 2 ;;
  esac
}
daemon_pids=()
daemon_dirs=()

start_daemon() {  # name, config.json text
  local dir="$home-bench-$1"
  rm -rf "$dir"
  mkdir -m 700 "$dir"
  cp -r "$home/images.json" "$home/images.lock" "$home/recipes" "$dir/"
  printf '%s\n' "$2" > "$dir/config.json"
  PYBOX_HOME="$dir" "$bin/pyboxd" 2> "$dir/pyboxd.log" &
  daemon_pids+=($!)
  daemon_dirs+=("$dir")
  for _ in $(seq 1 100); do [ -S "$dir/pyboxd.sock" ] && break; sleep 0.05; done
  PYBOX_HOME="$dir" "$bin/pybox" vm start > /dev/null
}

cluster_only_config() {  # the config.json of a daemon whose only engine taking runs is the test
  # cluster of $PYBOX_K8S_HOME/cluster.env (sourced by the caller), "max_runs" 4 (the test node's
  # 2 CPUs admit four 500m Pods); its local engine is the suite's, which holds the images
  printf '{"engine_socket": "%s", "local_engine": false, "engines": [{"id": "cluster", "kind": "kubernetes", ' "$engine_socket"
  printf '"kubeconfig": "%s", "namespace": "%s", "image_registry": "%s/pybox", "node": "%s", "max_runs": 4}]}\n' \
    "$K8S_ADMIN_KUBECONFIG" "$K8S_NAMESPACE" "$K8S_REGISTRY" "$K8S_NODE"
}

stop_daemons() {
  local pid
  for pid in "${daemon_pids[@]}"; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  rm -rf "${daemon_dirs[@]}"
}
