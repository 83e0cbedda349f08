#!/usr/bin/env bash
# Configures and builds PyBox into ${BUILD_DIR:-build}. Extra arguments go to cmake;
# BUILD_TARGETS="pyboxd pybox" builds only those targets. Compiles through ccache when it is
# installed, keyed on paths relative to the checkout and not on the build folder, so every
# clone shares one cache (the debug info of a cached object may then name another clone's
# folder).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@"
cmake --build "$build_dir" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
