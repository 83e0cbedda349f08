#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to a passing test suite, in stages that each print
# when they start:
#  1. the Debian packages (scripts/install-deps.sh);
#  2. everything, tests included, with warnings as errors under AddressSanitizer and UBSan at -O0
#     (GCC instruments Asio's coroutines at -O2 five times slower), in ${ASAN_BUILD_DIR:-build-asan},
#     as a unity build (cmake/unity.cmake: batches of files compiled as one, so the Boost, Asio and
#     Catch2 headers are parsed once per batch); pyboxd and pybox first, so that the suite's images
#     are built into the tar cache beside the rest (tests/integration/prebuild_images.sh: on a fresh
#     machine their download and build overlap the compiler);
#  3. every ctest test of that build: unit, fuzz replay, integration, hostile, MCP, the pool and
#     ssh engines behind a test sshd, a real single-node Kubernetes (tests/k8s/,
#     docs/testing.md), the unsealed runner and the install layout, on real engines; any
#     sanitizer report fails it, the daemons' own logs included. Beside it, at the
#     idle scheduling priority (chrt --idle: they get a core only while the suite leaves one
#     unused, which it mostly does while it waits for its engines): the product (pyboxd, pybox,
#     their docs and data) built with warnings as errors, as users build it (file by file), in
#     ${RELEASE_BUILD_DIR:-build-release}; and every fuzz target built for libFuzzer and run for
#     ${FUZZ_SECONDS:-30} s of wall time each, two at once (scripts/fuzz.sh, clang), with the
#     units each executed printed at the end;
#  4. the soak (tests/soak/soak.sh with its defaults, 1,000 sequential runs and 200 from 8
#     clients) on the product's daemon, whose RSS and fds it holds flat (under a sanitizer its
#     quarantine would be measured instead);
#  5. the product's .deb, installed with apt-get, running a program (tests/install/deb_test.sh);
#  6. the end of the libFuzzer run, if it is still going: any crash, leak or report fails.
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

stage "everything under ASan and UBSan, -Werror, in $asan_dir; beside it, once pyboxd is built, the suite's images"
asan_flags=(-DPYBOX_WERROR=ON -DPYBOX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_UNITY_BUILD=ON)
BUILD_DIR=$asan_dir BUILD_TARGETS="pyboxd pybox" ./scripts/build.sh "${asan_flags[@]}"
images_log=$(mktemp)
./tests/integration/prebuild_images.sh "$asan_dir" > "$images_log" 2>&1 &
images=$!
trap 'kill "$images" 2> /dev/null || true' EXIT
BUILD_DIR=$asan_dir ./scripts/build.sh "${asan_flags[@]}"
if ! wait "$images"; then
  tail -n 60 "$images_log" >&2
  echo "test: building the suite's images failed (the last lines above)" >&2
  exit 1
fi
rm -f "$images_log"
echo "== the suite's images are in the tar cache, $SECONDS s in"

stage "the suite under ASan and UBSan; beside it, at idle priority, the product's build (-Werror, in $release_dir) and the fuzz targets' build and libFuzzer run"
product_log=$(mktemp)
fuzz_log=$(mktemp)
# Each in a session of its own, so that a failed suite stops it with everything it started.
BUILD_DIR=$release_dir setsid chrt --idle 0 ./scripts/build.sh -DPYBOX_WERROR=ON -DPYBOX_TESTS=OFF \
  > "$product_log" 2>&1 &
product=$!
setsid chrt --idle 0 ./scripts/fuzz.sh "${FUZZ_SECONDS:-30}" > "$fuzz_log" 2>&1 &
fuzzing=$!
trap 'kill -- -"$product" -"$fuzzing" 2> /dev/null || true; rm -f "$product_log" "$fuzz_log"' EXIT
# Any report fails the run (halt_on_error; UBSan made fatal).
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir "$asan_dir" --output-on-failure --timeout 900
# The daemons the suite started wrote their reports to their logs, not to a test's output.
asan_home=$(test_home "$asan_dir")
if grep -l -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$asan_home"*/pyboxd.log 2>/dev/null; then
  echo "test: a daemon of the sanitizer suite reported an error (logs above)" >&2
  exit 1
fi

stage "the product: the rest of its build"
if ! wait "$product"; then
  tail -n 60 "$product_log" >&2
  echo "test: the product's build failed (its last lines above)" >&2
  exit 1
fi

stage "the soak on the product's daemon"
./tests/soak/with_fixture.sh "$release_dir"

stage "the product's .deb"
./tests/install/deb_test.sh "$release_dir"

stage "libFuzzer: the rest of its run"
if ! wait "$fuzzing"; then
  tail -n 80 "$fuzz_log" >&2
  echo "test: a fuzz target's build or libFuzzer run failed (its last lines above)" >&2
  exit 1
fi
grep "_fuzz: " "$fuzz_log"
stage "passed"
