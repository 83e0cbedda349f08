#!/usr/bin/env bash
# ctest fixture: a second dockerd standing in for another host's engine (the pool's second
# engine, and the engine behind the test sshd). Its own data-root, exec-root and socket under
# $PYBOX_ENGINE2_DIR, no TCP listener, no bridge, no iptables, /etc/docker/daemon.json never
# read; started and stopped by the fixture, never by pyboxd. Prints nothing on success; the
# socket is $PYBOX_ENGINE2_DIR/docker.sock and the log $PYBOX_ENGINE2_DIR/dockerd.log.
set -euo pipefail
: "${PYBOX_ENGINE2_DIR:?}"
"$(dirname "$0")/engine2_down.sh" || true
mkdir -p "$PYBOX_ENGINE2_DIR"
chmod 700 "$PYBOX_ENGINE2_DIR"
echo '{}' > "$PYBOX_ENGINE2_DIR/daemon.json"
nohup /usr/sbin/dockerd --config-file "$PYBOX_ENGINE2_DIR/daemon.json" \
  --data-root "$PYBOX_ENGINE2_DIR/data" --exec-root "$PYBOX_ENGINE2_DIR/exec" \
  -H "unix://$PYBOX_ENGINE2_DIR/docker.sock" --pidfile "$PYBOX_ENGINE2_DIR/dockerd.pid" \
  --bridge none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
  --userland-proxy=false --log-driver none --containerd-namespace pybox-engine2 \
  --containerd-plugins-namespace pybox-engine2-plugins \
  > "$PYBOX_ENGINE2_DIR/dockerd.log" 2>&1 &
for _ in $(seq 1 200); do
  if curl -sf --unix-socket "$PYBOX_ENGINE2_DIR/docker.sock" http://engine/_ping > /dev/null; then exit 0; fi
  sleep 0.1
done
echo "engine2_up: the second dockerd did not answer within 20 s; its log:" >&2
tail -20 "$PYBOX_ENGINE2_DIR/dockerd.log" >&2
exit 1
