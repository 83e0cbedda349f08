#!/usr/bin/env bash
# Installs the Debian 12 packages PyBox builds and runs with (docs/reference.md, "Requirements").
# Needs root and Debian's archive; no container registry is used. dpkg-dev (dpkg-shlibdeps) and
# file are what `cpack -G DEB` needs to find the package's library dependencies; jq reads
# receipts in the install tests (tests/install/); systemd is there for systemd-analyze, which
# checks the installed units offline (tests/install/units_test.sh; nothing is started with it);
# python3 and git are the test scripts' (a free port for the test sshd, the soak's JSON checks, the
# revision test's repository), named here rather than assumed of the machine. The Python library
# (client/python) is built into a wheel with python3-build, python3-setuptools and python3-wheel
# (no index: --no-isolation), installed into a python3-venv venv, checked with mypy and tested
# with python3-pytest; pybox.verify uses python3-cryptography; scripts/demo.sh installs it with
# python3-pip.
set -euo pipefail
packages=(
  cmake g++ ninja-build pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev libcli11-dev libssh2-1-dev libssl-dev catch2
  docker.io mmdebstrap ca-certificates curl
  openssh-server socat
  zsh fish groff-base
  dpkg-dev file jq systemd
  python3 git
  python3-pytest mypy python3-build python3-venv python3-cryptography python3-setuptools python3-wheel python3-pip
  clang libclang-rt-14-dev
  # yaml-cpp reads a cluster engine's kubeconfig (daemon/kube/kubeconfig.cpp).
  libyaml-cpp-dev
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# openssh-server is here for its sshd binary only (the ssh test fixture starts its own sshd on
# 127.0.0.1): installing it must not start or enable the system's ssh service. While it is
# installed, a policy-rc.d (unless one exists) stops the package from starting the service, and
# the units the package enabled are disabled again.
new_sshd=no
for package in "${missing[@]}"; do [ "$package" = openssh-server ] && new_sshd=yes; done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  own_policy=no
  if [ "$new_sshd" = yes ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=yes
  fi
  status=0
  apt-get install -y -q --no-install-recommends "${missing[@]}" || status=$?
  [ "$own_policy" = yes ] && rm -f /usr/sbin/policy-rc.d
  if [ "$new_sshd" = yes ] && command -v systemctl > /dev/null; then
    systemctl disable ssh.service ssh.socket > /dev/null 2>&1 || true
  fi
  [ "$status" = 0 ] || exit "$status"
fi
# The MCP tests (tests/mcp/, run by ctest) need Node 20 or later with npm, which Debian 12 does
# not carry (its nodejs is 18): install them from nodejs.org or NodeSource. Building and running
# PyBox do not need them, so this is only a warning; ctest's mcp_node step fails without them.
if ! command -v node > /dev/null || ! command -v npm > /dev/null ||
   [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "install-deps: warning: the MCP tests (tests/mcp/) need Node 20 or later with npm; install it from" \
       "https://nodejs.org or NodeSource" >&2
fi
