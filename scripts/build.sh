#!/usr/bin/env bash
# Configures and builds PyBox into ${BUILD_DIR:-build}. Extra arguments go to cmake;
# BUILD_TARGETS="pyboxd pybox" builds only those targets. Compiles through ccache when it is
# installed (paths relative to the checkout, so every clone shares one cache).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@"
cmake --build "$build_dir" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
