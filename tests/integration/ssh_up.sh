#!/usr/bin/env bash
# ctest fixture: an OpenSSH sshd on 127.0.0.1 at a free unprivileged port, in front of the
# engine2 fixture's dockerd (standing in for another host reached over ssh). Everything lives in
# $PYBOX_SSH_DIR: a host key and two user keys generated per run (ed25519; "user" is authorized,
# "other" is not), its own sshd_config (no PAM, no passwords, root by key only, keys file and
# pid file here, LogLevel VERBOSE to sshd.log) and a tiny image root (dash and its libraries,
# tiny-rootfs.tar) for the tests to import into engine2. Writes what the tests need to
# $PYBOX_SSH_DIR/ssh.env (PORT, USER_KEY, OTHER_KEY, HOST_KEY, KNOWN_HOSTS, ENGINE_SOCKET, ...).
# With --restart, starts sshd again from the files of the last run (same port and keys).
# Starts no system service; ssh_down.sh stops exactly the sshd this started.
set -euo pipefail
: "${PYBOX_SSH_DIR:?}" "${PYBOX_ENGINE2_DIR:?}"
dir=$PYBOX_SSH_DIR
sshd=/usr/sbin/sshd
[ -x "$sshd" ] || { echo "ssh_up: $sshd is missing: run scripts/install-deps.sh (openssh-server)" >&2; exit 1; }
command -v socat > /dev/null || { echo "ssh_up: socat is missing: run scripts/install-deps.sh" >&2; exit 1; }

# sshd insists on its privilege separation user and folder (Debian: sshd, /run/sshd), which the
# package's postinst and its service make. A machine can lack either (the user was seen missing on
# a fresh machine with openssh-server installed): make them as those do, or stop here with why.
if ! getent passwd sshd > /dev/null; then
  useradd --system --no-create-home --home-dir /run/sshd --shell /usr/sbin/nologin --gid nogroup sshd ||
    { echo "ssh_up: sshd's privilege separation user 'sshd' is missing and could not be made" >&2; exit 1; }
fi
[ -d /run/sshd ] || install -d -m 0755 /run/sshd

start_sshd() {
  "$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log"
  # shellcheck disable=SC1091
  port=$(. "$dir/ssh.env" && echo "$PORT")
  for _ in $(seq 1 100); do
    if [ -s "$dir/sshd.pid" ] && (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then return 0; fi
    sleep 0.05
  done
  echo "ssh_up: sshd did not listen on 127.0.0.1:$port within 5 s; its log:" >&2
  tail -20 "$dir/sshd.log" >&2
  return 1
}

if [ "${1:-}" = --restart ]; then
  start_sshd
  exit 0
fi

"$(dirname "$0")/ssh_down.sh" || true
rm -rf "$dir"
mkdir -p "$dir"
chmod 700 "$dir"

# A free port: let the kernel pick one, then hand it to sshd.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

ssh-keygen -q -t ed25519 -N '' -C pybox-test-host -f "$dir/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -C pybox-test-user -f "$dir/user_ed25519"
ssh-keygen -q -t ed25519 -N '' -C pybox-test-other -f "$dir/other_ed25519"
cp "$dir/user_ed25519.pub" "$dir/authorized_keys"
host_key=$(ssh-keygen -lf "$dir/host_ed25519.pub" | awk '{print $2}')
echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$dir/host_ed25519.pub")" > "$dir/known_hosts"

cat > "$dir/sshd_config" <<CONFIG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
# The fixture folder is under /tmp (sticky, world-writable), which StrictModes refuses.
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowAgentForwarding no
AllowTcpForwarding no
X11Forwarding no
PermitTunnel no
PrintMotd no
MaxSessions 64
# Root's non-interactive bash would source ~/.bashrc (SHLVL below 2 under sshd).
SetEnv SHLVL=1
LogLevel VERBOSE
CONFIG
"$sshd" -t -f "$dir/sshd_config"

# The tiny image root: dash and what it links against.
rootfs="$dir/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/tmp"
cp /bin/dash "$rootfs/bin/sh"
for library in $(ldd /bin/dash | grep -o '/[^ ]*'); do
  mkdir -p "$rootfs$(dirname "$library")"
  cp -L "$library" "$rootfs$library"
done
tar -C "$rootfs" -cf "$dir/tiny-rootfs.tar" .

cat > "$dir/ssh.env" <<ENV
PORT=$port
USER=root
USER_KEY=$dir/user_ed25519
OTHER_KEY=$dir/other_ed25519
HOST_KEY=$host_key
KNOWN_HOSTS=$dir/known_hosts
ENGINE_SOCKET=$PYBOX_ENGINE2_DIR/docker.sock
SSHD_LOG=$dir/sshd.log
TINY_ROOTFS=$dir/tiny-rootfs.tar
ENV
start_sshd
