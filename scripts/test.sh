#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to a passing test suite: installs the packages,
# builds with warnings as errors, then runs every test with ctest. The integration tests'
# fixture starts the suite's own pyboxd and private engine in /tmp/pybox-test-<hash of the
# build folder> and builds the stdlib image there (never touching ~/.pybox).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DPYBOX_WERROR=ON
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --timeout 900
