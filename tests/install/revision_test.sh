#!/usr/bin/env bash
# ctest revision: common/revision.cmake names the git revision of a checkout at its top, with
# "-dirty" while a tracked file is changed, follows a new commit without a re-configure, and says
# "unknown" for sources without git (a tarball), even when they sit inside another checkout.
#   PYBOX_SOURCE  the source tree (for revision.cmake)
set -euo pipefail
: "${PYBOX_SOURCE:?}"
work=$(mktemp -d /tmp/pybox-revision-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "revision: $*" >&2; exit 1; }
revision_of() {
  cmake -DGIT="$(command -v git)" -DSOURCE_DIR="$1" -DOUTPUT="$work/revision.cpp" -P "$PYBOX_SOURCE/common/revision.cmake"
  sed -n 's/^    return "\(.*\)";$/\1/p' "$work/revision.cpp"
}
expect() {
  local got
  got=$(revision_of "$1")
  [ "$got" = "$2" ] || fail "$3: got '$got', expected '$2'"
}

mkdir "$work/tarball"
expect "$work/tarball" unknown "sources without git"

repo=$work/repo
git init -q "$repo"
git -C "$repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
echo a > "$repo/tracked"
git -C "$repo" add tracked
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m two
expect "$repo" "$(git -C "$repo" rev-parse --short=7 HEAD)" "a clean checkout"
echo b > "$repo/untracked"
expect "$repo" "$(git -C "$repo" rev-parse --short=7 HEAD)" "an untracked file"
echo b > "$repo/tracked"
expect "$repo" "$(git -C "$repo" rev-parse --short=7 HEAD)-dirty" "a changed tracked file"
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -am three
expect "$repo" "$(git -C "$repo" rev-parse --short=7 HEAD)" "a new commit"
mkdir "$repo/unpacked"
expect "$repo/unpacked" unknown "sources inside another checkout"

# The file is rewritten only when the revision changes, so a build recompiles nothing.
revision_of "$repo" > /dev/null
touch -d '2001-01-01' "$work/revision.cpp"
revision_of "$repo" > /dev/null
[ "$(stat -c %Y "$work/revision.cpp")" = "$(date -d '2001-01-01' +%s)" ] || fail "an unchanged revision rewrote the file"
echo "revision: unknown, clean, dirty, new commit, nested: as expected"
