#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to a passing test suite: installs the packages,
# builds with warnings as errors, then runs every test with ctest (the soak included, and the
# install layout); then builds the .deb, installs it and runs a program with it; then the
# same suite again in an AddressSanitizer + UBSan build (${ASAN_BUILD_DIR:-build-asan}); then
# every fuzz target under libFuzzer for ${FUZZ_SECONDS:-30} s (scripts/fuzz.sh; ctest only
# replays their seed corpora). The integration tests' fixture starts the suite's own pyboxd and
# private engine in /tmp/pybox-test-<hash of the build folder> and builds the stdlib and data
# images there (never touching ~/.pybox), importing them from ~/.cache/pybox-test/image-tars
# when a tar of the same recipe SHA-256 is there.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DPYBOX_WERROR=ON
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --timeout 900
# The .deb of this build (never the sanitizer build's), installed with apt-get and run with the
# build folder moved away: the seed page's first sealed run with /usr/bin/pybox and pyboxd.
./tests/install/deb_test.sh "${BUILD_DIR:-build}"

# Sanitizers: any report fails the run (halt_on_error; UBSan made fatal).
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
asan_dir=${ASAN_BUILD_DIR:-build-asan}
BUILD_DIR=$asan_dir ./scripts/build.sh -DPYBOX_WERROR=ON -DPYBOX_SANITIZE=ON
ctest --test-dir "$asan_dir" --output-on-failure --timeout 900
unset ASAN_OPTIONS UBSAN_OPTIONS
# The daemons the suite started wrote their reports to their logs, not to a test's output.
asan_home=/tmp/pybox-test-$(printf '%s' "$(cd "$asan_dir" && pwd)" | md5sum | cut -c1-8)
if grep -l -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$asan_home"*/pyboxd.log 2>/dev/null; then
  echo "test: a daemon of the sanitizer suite reported an error (logs above)" >&2
  exit 1
fi

./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
