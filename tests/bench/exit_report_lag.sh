#!/usr/bin/env bash
# Benchmark (issue 28): how much sooner a run could be answered if it went on from the kernel's
# record of the box's end instead of the engine's report of the exit. For R warm runs of
# print(6*7) through `pybox exec --json` on the suite's daemon, from each receipt: the box's end
# as the kernel recorded it (observed.termination.box_end.since_delivery_s) and the end of the
# run phase, which is the engine's /wait answer (lifecycle.phases "run" duration_s, also counted
# from delivery for a warm box); prints the medians and their difference in ms. Needs the suite's
# fixture up: PYBOX_HOME=/tmp/pybox-test-<hash> tests/bench/exit_report_lag.sh BUILD_DIR [R=30]
set -euo pipefail
build=${1:?usage: exit_report_lag.sh BUILD_DIR [RUNS]}
runs=${2:-30}
for _ in $(seq 1 "$runs"); do
  echo 'print(6*7)' | "$build/bin/pybox" exec - --json || true
  echo
done | python3 -c '
import json, statistics, sys
box, run = [], []
for line in sys.stdin:
    if not line.strip():
        continue
    receipt = json.loads(line)
    end = receipt["observed"]["termination"]["box_end"]
    phases = {p["name"]: p for p in receipt["lifecycle"]["phases"]}
    if end is None or "run" not in phases or not receipt["lifecycle"].get("warm"):
        continue
    box.append(end["since_delivery_s"] * 1000)
    run.append(phases["run"]["duration_s"] * 1000)
if not box:
    sys.exit("no warm receipt with the kernel record of the box end")
lag = [r - b for r, b in zip(run, box)]
print(f"{len(box)} warm runs of print(6*7):")
print(f"  box end recorded by the kernel, after delivery  median {statistics.median(box):6.1f} ms")
print(f"  engine /wait answer (end of the run phase)      median {statistics.median(run):6.1f} ms")
print(f"  what the answer waits for after the box ended   median {statistics.median(lag):6.1f} ms  min {min(lag):6.1f} ms")
'
