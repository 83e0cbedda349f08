#!/usr/bin/env bash
# Configures and builds PyBox into ${BUILD_DIR:-build}. Extra arguments go to cmake;
# BUILD_TARGETS="pyboxd pybox" builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build_dir" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
