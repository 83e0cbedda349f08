# Sourced by install_layout.sh and deb_test.sh: the seed page's first sealed run with one set of
# installed programs. Needs PYBOX_HOME (a running daemon's, with an engine) and these variables:
#   pybox      the installed client
#   version    the version the installed pyboxd prints (pyboxd --version)
# Sets up the stdlib image (imported from the image tar cache when its recipe SHA-256 is there),
# runs print(6*7), and checks the output and the receipt. Fails (set -e) on any difference.

sealed_run() {
  # The installed recipes are the committed ones; if Debian's archive has moved past their lock,
  # refresh the lock in the installed copy (a test prefix's), as the suite's fixture does.
  if ! "$pybox" setup 2> "$PYBOX_HOME/setup.err"; then
    cat "$PYBOX_HOME/setup.err" >&2
    grep -q -- "--refresh-lock" "$PYBOX_HOME/setup.err" || return 1
    echo "sealed_run: the pinned lock is outdated; refreshing the installed copy" >&2
    "$pybox" setup --refresh-lock
  fi
  "$pybox" image ls | grep -q '^stdlib ' || { echo "sealed_run: pybox image ls does not list stdlib" >&2; return 1; }

  local output
  output=$(echo 'print(6*7)' | "$pybox" exec - 2> "$PYBOX_HOME/exec.err")
  cat "$PYBOX_HOME/exec.err" >&2
  [ "$output" = 42 ] || { echo "sealed_run: pybox exec printed '$output', not 42" >&2; return 1; }
  grep -q '^PyBox receipt · run ' "$PYBOX_HOME/exec.err" ||
    { echo "sealed_run: no short receipt on stderr" >&2; return 1; }

  echo 'print(6*7)' | "$pybox" exec - --json > "$PYBOX_HOME/receipt.json"
  jq -e --arg version "$version" '
    .capture.stdout == "42\n" and
    .identity.daemon_version == $version and
    .observed.termination.mechanism == "TARGET_EXIT_OBSERVED" and
    .observed.termination.exit_code == 0 and
    .observed.policy_verified_before_start == true and
    .cleanup.removed == true' "$PYBOX_HOME/receipt.json" > /dev/null ||
    { echo "sealed_run: the receipt is not the expected one:" >&2; jq . "$PYBOX_HOME/receipt.json" >&2; return 1; }
}
