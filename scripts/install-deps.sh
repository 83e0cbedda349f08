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
  etcd-server docker-registry  # the Kubernetes test cluster's store and registry (tests/k8s/); the registry tests' (tests/registry/)
  xz-utils openssl iproute2  # tests/k8s/: the shared binaries are .xz; certificates; lo up in its netns
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
# Some packages are here for their binaries only, which the test fixtures start themselves on
# 127.0.0.1 (openssh-server: the ssh fixture's sshd; etcd-server and docker-registry: the
# Kubernetes test cluster's, tests/k8s/, and docker-registry the registry fixture's,
# tests/registry/): installing them must not start or enable the system's
# services. While such a package is installed, a policy-rc.d (unless one exists) stops the package
# from starting its services, and the units it enabled are disabled again.
declare -A binary_only_units=(
  [openssh-server]="ssh.service ssh.socket"
  [etcd-server]="etcd.service"
  [docker-registry]="docker-registry.service"
)
units_to_disable=()
for package in "${missing[@]}"; do
  read -r -a units <<< "${binary_only_units[$package]:-}"
  units_to_disable+=("${units[@]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  own_policy=no
  if [ ${#units_to_disable[@]} -gt 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=yes
  fi
  status=0
  apt-get install -y -q --no-install-recommends "${missing[@]}" || status=$?
  [ "$own_policy" = yes ] && rm -f /usr/sbin/policy-rc.d
  if [ ${#units_to_disable[@]} -gt 0 ] && command -v systemctl > /dev/null; then
    systemctl disable "${units_to_disable[@]}" > /dev/null 2>&1 || true
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
