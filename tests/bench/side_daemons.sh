# Sourced by the benchmarks: daemons of their own beside the suite's ($PYBOX_HOME, whose images
# they record), each in $PYBOX_HOME-bench-NAME with its own config.json, started and verified
# (`pybox vm start`, which copies the images to an engine that lacks them) by start_daemon and
# stopped, with their folders removed, by stop_daemons (the caller's EXIT trap).
: "${PYBOX_HOME:?the runtime folder of the suite}"
bin=${PYBOX_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin}
home=$PYBOX_HOME
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

stop_daemons() {
  local pid
  for pid in "${daemon_pids[@]}"; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  rm -rf "${daemon_dirs[@]}"
}
