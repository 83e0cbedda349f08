#!/usr/bin/env bash
# Usage: tests/integration/prebuild_images.sh BUILD_DIR
# Builds the suite's images (stdlib and data) into the image tar cache ($PYBOX_IMAGE_TAR_CACHE,
# env_up.sh) with BUILD_DIR's pyboxd and pybox, in a runtime folder and private engine of its
# own (the suite's home with "-images" after it), which it removes again. scripts/test.sh runs it
# beside the rest of the sanitizer build, so that on a fresh machine the images' download and
# build overlap the compiler instead of following it; the suite's fixture then imports the
# tars. Where the cache already holds them this is an import and a removal.
set -euo pipefail
build_dir=${1:?usage: prebuild_images.sh BUILD_DIR}
cd "$(dirname "$0")/../.."
source tests/support/fixture.sh
export PYBOX_HOME PYBOX_BIN PYBOX_SOURCE
PYBOX_HOME="$(test_home "$build_dir")-images"
PYBOX_BIN="$(cd "$build_dir" && pwd)/bin"
PYBOX_SOURCE=$(pwd)
# The sync: the engine's state it removes is gigabytes of layers, and their writeback must not
# still be running when the suite starts (the unit tests' fsyncs waited behind it for seconds).
trap './tests/integration/env_down.sh; rm -rf "$PYBOX_HOME-recipes"; sync' EXIT
./tests/integration/env_up.sh
