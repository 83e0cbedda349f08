#!/usr/bin/env bash
# ctest fixture: Debian's docker-registry (the distribution project's `registry`, package
# docker-registry) on 127.0.0.1 at a free port, with its own config: plain HTTP, no auth, its
# storage in $PYBOX_REGISTRY_DIR/storage (the package's own config would turn on htpasswd auth
# and listen on every address; it is never read, and no system service is started). Writes
# $PYBOX_REGISTRY_DIR/registry.env (ADDRESS=127.0.0.1:PORT, STORAGE=folder, LOG=file) for the
# tests. registry_down.sh stops exactly the registry this started.
set -euo pipefail
: "${PYBOX_REGISTRY_DIR:?}"
dir=$PYBOX_REGISTRY_DIR
registry=/usr/bin/docker-registry
[ -x "$registry" ] || { echo "registry_up: $registry is missing: run scripts/install-deps.sh (docker-registry)" >&2; exit 1; }

"$(dirname "$0")/registry_down.sh" || true
rm -rf "$dir"
mkdir -p "$dir/storage"
chmod 700 "$dir"

# A free port: let the kernel pick one, then hand it to the registry.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$dir/config.yml" <<CONFIG
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $dir/storage
http:
  addr: 127.0.0.1:$port
CONFIG
cat > "$dir/registry.env" <<ENV
ADDRESS=127.0.0.1:$port
STORAGE=$dir/storage
LOG=$dir/registry.log
ENV

nohup "$registry" serve "$dir/config.yml" > "$dir/registry.log" 2>&1 &
echo $! > "$dir/registry.pid"
for _ in $(seq 1 100); do
  if curl -sf "http://127.0.0.1:$port/v2/" > /dev/null; then exit 0; fi
  sleep 0.1
done
echo "registry_up: the registry did not answer on 127.0.0.1:$port within 10 s; its log:" >&2
tail -20 "$dir/registry.log" >&2
exit 1
