#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to a passing test suite, in stages that each print
# when they start:
#  1. the Debian packages (scripts/install-deps.sh);
#  2. the product (pyboxd, pybox, their docs and data) with warnings as errors, as users build
#     it, in ${RELEASE_BUILD_DIR:-build-release};
#  3. everything, tests included, with warnings as errors under AddressSanitizer and UBSan at -O0
#     (GCC instruments Asio's coroutines at -O2 five times slower), in ${ASAN_BUILD_DIR:-build-asan};
#  4. every ctest test of that build: unit, fuzz replay, integration, hostile, MCP, the pool and
#     ssh engines behind a test sshd, the unsealed runner and the install layout, on real
#     engines; any sanitizer report fails it, the daemons' own logs included;
#  5. the soak (tests/soak/soak.sh with its defaults, 1,000 sequential runs and 200 from 8
#     clients) on the product's daemon, whose RSS and fds it holds flat (under a sanitizer its
#     quarantine would be measured instead);
#  6. the product's .deb, installed with apt-get, running a program (tests/install/deb_test.sh);
#  7. every fuzz target under libFuzzer for ${FUZZ_SECONDS:-30} s (scripts/fuzz.sh, clang).
# The suite's fixture starts its own pyboxd and private engine in /tmp/pybox-test-<hash of the
# build folder> and builds the stdlib and data images there (never touching ~/.pybox),
# importing them from ~/.cache/pybox-test/image-tars when a tar of the same recipe SHA-256 is
# there; the soak and the .deb test then import them from that cache.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/support/fixture.sh
stage() { printf '\n== test.sh: %s (%d s in)\n' "$*" "$SECONDS"; }
# The three builds (product, sanitizer, fuzz) take several GB in ccache (scripts/build.sh); its
# default 5 GB would evict one build with the next, and the next run could reuse none of them.
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
release_dir=${RELEASE_BUILD_DIR:-build-release}
asan_dir=${ASAN_BUILD_DIR:-build-asan}

stage "Debian packages"
./scripts/install-deps.sh

stage "the product, -Werror, in $release_dir"
BUILD_DIR=$release_dir ./scripts/build.sh -DPYBOX_WERROR=ON -DPYBOX_TESTS=OFF

stage "everything under ASan and UBSan, -Werror, in $asan_dir"
BUILD_DIR=$asan_dir ./scripts/build.sh -DPYBOX_WERROR=ON -DPYBOX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

stage "the suite under ASan and UBSan"
# Any report fails the run (halt_on_error; UBSan made fatal).
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir "$asan_dir" --output-on-failure --timeout 900
# The daemons the suite started wrote their reports to their logs, not to a test's output.
asan_home=$(test_home "$asan_dir")
if grep -l -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$asan_home"*/pyboxd.log 2>/dev/null; then
  echo "test: a daemon of the sanitizer suite reported an error (logs above)" >&2
  exit 1
fi

stage "the soak on the product's daemon"
./tests/soak/with_fixture.sh "$release_dir"

stage "the product's .deb"
./tests/install/deb_test.sh "$release_dir"

stage "libFuzzer"
./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
stage "passed"
