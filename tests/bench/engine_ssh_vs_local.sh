#!/usr/bin/env bash
# Benchmark: the ssh engine transport against the engine's unix socket (tests/ssh/ssh_bench_test.cpp),
# on the test fixtures: starts engine2 and the sshd in front of it in a home of its own
# ($PYBOX_BENCH_HOME, default /tmp/pybox-bench-ssh), runs N interleaved rounds (default 20) and
# stops both. Needs a build of the ssh_tests target (BUILD_DIR, default build).
# Usage: tests/bench/engine_ssh_vs_local.sh [N]
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
bench="${BUILD_DIR:-$source_dir/build}/bin/ssh_tests"
[ -x "$bench" ] || { echo "build the ssh_tests target first" >&2; exit 1; }
home=${PYBOX_BENCH_HOME:-/tmp/pybox-bench-ssh}
export PYBOX_ENGINE2_DIR=$home-engine2 PYBOX_SSH_DIR=$home-ssh
cleanup() {
  "$source_dir/tests/integration/ssh_down.sh" || true
  "$source_dir/tests/integration/engine2_down.sh" || true
}
trap cleanup EXIT
"$source_dir/tests/integration/engine2_up.sh"
"$source_dir/tests/integration/ssh_up.sh"
PYBOX_BENCH_ROUNDS=${1:-20} "$bench" "[.bench]"
