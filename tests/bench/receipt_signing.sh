#!/usr/bin/env bash
# Benchmark (issue 13): the cost of signing and keeping a receipt per run, in microseconds
# (tests/bench/receipt_sign_bench.cpp says what is timed). Builds the bench into
# ${BUILD_DIR:-build} and runs it: ROUNDS rounds (default 2000) for a typical receipt, a tenth of
# them for a large one; the kept file is written in FOLDER (default: the runtime folder's disk,
# $PYBOX_HOME or ~/.pybox/runtime, as the daemon writes it).
#   tests/bench/receipt_signing.sh [ROUNDS] [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir=${BUILD_DIR:-build}
folder=${2:-${PYBOX_HOME:-$HOME/.pybox/runtime}}
mkdir -p "$folder"
BUILD_DIR="$build_dir" BUILD_TARGETS=receipt_sign_bench ./scripts/build.sh > /dev/null
"$build_dir/bin/receipt_sign_bench" "${1:-2000}" "$folder"
