#!/usr/bin/env bash
# ctest fixture mcp_node (and by hand): installs the packages pinned in package-lock.json into
# tests/mcp/node_modules with `npm ci`, unless exactly those are installed already. Needs Node 20
# or later and, the first time, the npm registry (or an npm cache that holds these packages).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "tests/mcp: node and npm are needed (Node 20 or later); see scripts/install-deps.sh" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "tests/mcp: Node $(node --version) is too old; Node 20 or later is needed" >&2
  exit 1
fi
# npm keeps what it installed in node_modules/.package-lock.json: the same versions, nothing to do.
if [ -f node_modules/.package-lock.json ] && node -e '
  const fs = require("fs");
  const wanted = JSON.parse(fs.readFileSync("package-lock.json")).packages;
  const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json")).packages;
  for (const [path, entry] of Object.entries(wanted))
    if (path !== "" && (have[path] ? have[path].version !== entry.version : !entry.optional)) process.exit(1);
'; then
  exit 0
fi
if ! npm ci --no-audit --no-fund --prefer-offline; then
  echo "tests/mcp: npm ci failed. It needs the npm registry (https://registry.npmjs.org) or an npm cache" \
       "holding the packages pinned in tests/mcp/package-lock.json; nothing else can stand in for them." >&2
  exit 1
fi
