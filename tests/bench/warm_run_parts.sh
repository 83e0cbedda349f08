#!/usr/bin/env bash
# Benchmark (issue 10): the parts of a warm run's "run" phase, on the suite's engine, in boxes
# with the stdlib image and limits. (1) Inside one box, R times: `python3 -I -B -u -` running
# print(6*7), then the same through the warm box's first step (`perl -e STEP`, read from the
# suite's daemon's warm box) started with the timer line and the program already on its stdin,
# so the interpreter's start is counted; each timed with `date` in the box. (2) Through the
# Engine API (Debian's
# python3-docker, warm_run_parts.py), R boxes made like a warm box (created, attached, started,
# waiting in that step): from the program's delivery to its first output, to the end of the
# attach stream and to the `/wait` answer. Prints medians and minimums in ms. Needs the suite's
# fixture up: PYBOX_HOME=/tmp/pybox-test-<hash> tests/bench/warm_run_parts.sh [R=25]
set -euo pipefail
repeats=${1:-25}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/side_daemons.sh"
box_limits stdlib
image=$(image_id stdlib)
[ -n "$image" ] || { echo "no stdlib image recorded in $home/images.json: run pybox setup" >&2; exit 1; }
# The warm first step, as the suite's daemon gives it to its warm box (Cmd: perl -e STEP).
owner=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["installation_id"])' "$home/installation.json")
warm_box=$("$docker_cli" -H "unix://$engine_socket" ps -q --filter "label=pybox.owner=$owner" --filter status=running |
  head -n 1)
[ -n "$warm_box" ] || { echo "the suite's daemon has no warm box running (warm_boxes 0?)" >&2; exit 1; }
first_step=$("$docker_cli" -H "unix://$engine_socket" inspect -f '{{index .Config.Cmd 2}}' "$warm_box")

# shellcheck disable=SC2016  # expanded in the box
"$docker_cli" -H "unix://$engine_socket" run --rm -i "${box_docker_flags[@]}" "${box_limits_flags[@]}" \
  --tmpfs "/tmp:size=16777216,noexec,nodev,nosuid" "$image" sh -c '
  n=0
  while [ "$n" -lt "$1" ]; do
    n=$((n + 1))
    a=$(date +%s%N); printf "print(6*7)\n" | python3 -I -B -u - > /dev/null
    b=$(date +%s%N); printf "31\nprint(6*7)\n" | perl -e "$2" > /dev/null
    c=$(date +%s%N); echo "$(( (b - a) / 1000 )) $(( (c - b) / 1000 ))"
  done' sh "$repeats" "$first_step" |
  python3 -c 'import statistics, sys
rows = [[int(v) / 1000 for v in line.split()] for line in sys.stdin]
for i, name in enumerate(["python3 print(6*7) in a box", "the same behind the warm first step"]):
    values = [row[i] for row in rows]
    print(f"{name:44} median {statistics.median(values):6.1f} ms  min {min(values):6.1f} ms")'
/usr/bin/python3 "$here/warm_run_parts.py" "unix://$engine_socket" "$image" "$repeats" "$first_step"
