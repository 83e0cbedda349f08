#!/usr/bin/env bash
# Installs the Debian 12 packages PyBox builds and runs with (DESIGN.md "Dependencies").
# Needs root and Debian's archive; no container registry is used.
set -euo pipefail
packages=(
  cmake g++ ninja-build pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev libcli11-dev libssh2-1-dev libssl-dev catch2
  docker.io mmdebstrap ca-certificates curl
  clang libclang-rt-14-dev
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
