#!/usr/bin/env bash
# Runs the soak (tests/soak/soak.sh, with its own defaults unless counts are given) against the
# pyboxd of BUILD_DIR, under the suite's fixture (tests/integration/env_up.sh, then env_down.sh
# whatever happened) in the test home ctest would give that build folder (test_home,
# tests/support/fixture.sh). scripts/test.sh runs it on the product's build.
# Needs root.   Usage: tests/soak/with_fixture.sh BUILD_DIR [SEQUENTIAL [PARALLEL [CLIENTS]]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: with_fixture.sh BUILD_DIR [SEQUENTIAL [PARALLEL [CLIENTS]]]}" && pwd)
shift
source "$here/../support/fixture.sh"
PYBOX_HOME=$(test_home "$build")
PYBOX_BIN=$build/bin
PYBOX_SOURCE=$(cd "$here/../.." && pwd)
PYBOX_FIXTURE_STDLIB_ONLY=1  # the soak runs print(6*7) in the stdlib image
export PYBOX_HOME PYBOX_BIN PYBOX_SOURCE PYBOX_FIXTURE_STDLIB_ONLY
trap '"$here/../integration/env_down.sh"' EXIT
"$here/../integration/env_up.sh"
"$here/soak.sh" "$@"
