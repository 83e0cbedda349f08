#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [SECONDS]   (or scripts/fuzz.sh --build: the build only)
# Builds every fuzz target with clang's libFuzzer (plus ASan and UBSan) into
# ${FUZZ_BUILD_DIR:-build-fuzz}, as a unity build (cmake/unity.cmake), and runs each for SECONDS (default 30), as many at once as there
# are cores, from its committed seed corpus (tests/fuzz/corpus/<target>/, read only: new inputs
# go to a scratch folder). Fails if any target found a crash, leak or sanitizer report, and
# prints its log and where its reproducer was kept. Needs clang and libclang-rt-14-dev (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
targets=()
for source in tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done

CXX=clang++ BUILD_DIR="$build_dir" BUILD_TARGETS="${targets[*]}" \
  ./scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DPYBOX_FUZZ=ON -DCMAKE_UNITY_BUILD=ON
if [ "$seconds" = --build ]; then exit 0; fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# One target; its log and a reproducer stay in the scratch folder, its status in $target.status.
fuzz_one() {
  local target=$1
  mkdir -p "$scratch/$target"
  local status=0
  "$build_dir/bin/$target" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$scratch/$target-" "$scratch/$target" "tests/fuzz/corpus/$target" \
    > "$scratch/$target.log" 2>&1 || status=$?
  echo "$status" > "$scratch/$target.status"
}
# As many targets at once as there are cores.
running=0
for target in "${targets[@]}"; do
  echo "fuzz: $target for ${seconds} s"
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$(nproc)" ]; then wait -n; running=$((running - 1)); fi
done
wait

failed=0
for target in "${targets[@]}"; do
  if [ "$(cat "$scratch/$target.status")" != 0 ]; then
    tail -n 40 "$scratch/$target.log" >&2
    mkdir -p "$build_dir/fuzz-artifacts"
    cp "$scratch/$target"-* "$build_dir/fuzz-artifacts/" 2>/dev/null || true
    echo "fuzz: $target failed; reproducers in $build_dir/fuzz-artifacts/" >&2
    failed=1
  else
    printf '%s: ' "$target"
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$scratch/$target.log" | tr '\n' ' '
    echo
  fi
done
exit $failed
