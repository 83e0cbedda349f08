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
# The MCP tests (tests/mcp/, run by ctest) need Node 20 or later with npm, which Debian 12 does
# not carry (its nodejs is 18): install them from nodejs.org or NodeSource. Building and running
# PyBox do not need them, so this is only a warning; ctest's mcp_node step fails without them.
if ! command -v node > /dev/null || ! command -v npm > /dev/null ||
   [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "install-deps: warning: the MCP tests (tests/mcp/) need Node 20 or later with npm; install it from" \
       "https://nodejs.org or NodeSource" >&2
fi
