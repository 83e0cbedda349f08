"""The report of warm_vs_cold.sh: reads its times file (one line a run: kind, start, end, receipt
file; epicbox lines carry "0 <seconds> <ok>"; "ready" lines: a warm run's answer and when the
next warm box ran; "cpu" lines: a back-to-back series' busy CPU seconds at its start and end, and
its kind) and prints medians, p95 and minimums, the issue's ratios, the CPU time of a
back-to-back run, and the medians of the pybox receipts' lifecycle. Arguments: times file,
rounds, series length, the warm daemon's warm_boxes ("default" when its config leaves it out),
the number of cores."""
import json
import math
import statistics
import sys

times_file, rounds, series, warm_boxes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cores = int(sys.argv[5])
walls, receipts, failures, ready, series_cpu = {}, {}, {}, [], {}
for line in open(times_file):
    kind, begun, ended, extra = line.split()
    if kind == "cpu":
        series_cpu[extra] = (float(ended) - float(begun)) / series
        continue
    if kind == "ready":
        ready.append(float(ended) - float(begun))
        continue
    if kind == "epicbox":
        walls.setdefault(kind, []).append(float(ended))
        failures[kind] = failures.get(kind, 0) + (extra != "ok")
        continue
    walls.setdefault(kind, []).append(float(ended) - float(begun))
    if extra == "-":
        continue
    try:
        receipt = json.load(open(extra))
    except ValueError:
        receipt = None
    ok = receipt is not None and receipt["capture"]["stdout"] == "42\n"
    failures[kind] = failures.get(kind, 0) + (not ok)
    if receipt is not None:
        receipts.setdefault(kind, []).append(receipt)


def p95(values):
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def median(kind):
    return statistics.median(walls[kind])


rows = [("warm", f"pybox exec, warm box (warm_boxes {warm_boxes})"), ("cold", "pybox exec, cold (warm_boxes 0)"),
        ("docker", "docker run --rm -i (same limits)"), ("epicbox", "epicbox.run() (library call)"),
        ("warm-b2b", "pybox exec, warm, back-to-back"), ("cold-b2b", "pybox exec, cold, back-to-back")]
print(f"print(6*7): {rounds} interleaved rounds, then back-to-back series of {series}")
print(f"{'':40} {'runs':>5} {'median s':>9} {'p95 s':>7} {'min s':>7} {'failed':>7}")
for kind, label in rows:
    if kind in walls:
        values = walls[kind]
        print(f"{label:40} {len(values):5} {median(kind):9.4f} {p95(values):7.4f} {min(values):7.4f} "
              f"{failures.get(kind, 0):7}")


def ratio(label, a, b, target=None):
    if a in walls and b in walls:
        value = median(a) / median(b)
        verdict = "" if target is None else f"   (target <= {target}: {'met' if value <= target else 'MISSED'})"
        print(f"  {label:44} {value:5.2f}{verdict}")


print("ratios of medians:")
ratio("warm / docker run --rm -i", "warm", "docker", 0.35)
ratio("warm / epicbox", "warm", "epicbox", 0.5)
ratio("warm / cold", "warm", "cold")
ratio("cold / docker run --rm -i", "cold", "docker")
ratio("back-to-back warm / single warm", "warm-b2b", "warm", 1.0)
ratio("back-to-back warm / single cold", "warm-b2b", "cold")
ratio("back-to-back cold / single cold", "cold-b2b", "cold")
if ready:
    print(f"next warm box running after a warm answer: median {statistics.median(ready):.3f} s, "
          f"max {max(ready):.3f} s (polled every ~0.05 s)")
for kind, cpu in series_cpu.items():
    print(f"{kind}: the machine's busy CPU time per run {cpu:.3f} s; on {cores} cores a run every "
          f"{cpu / cores:.3f} s at best, against a median wall time of {median(kind):.3f} s")


def phase(receipt, name, where="phases"):
    lifecycle = receipt["lifecycle"]
    listed = lifecycle["phases"] if where == "phases" else (lifecycle.get("preparation") or {}).get("phases", [])
    return next((p["duration_s"] for p in listed if p["name"] == name), None)


def med(values):
    values = [v for v in values if v is not None]
    return f"{1000 * statistics.median(values):7.1f}" if values else f"{'-':>7}"


print("pybox receipts, medians in ms (before box: request arrival to the run's own start, image check"
      " and taking the warm box included; client: wall time minus the daemon's queued + total)")
names = ["create", "verify", "start", "run", "inspect", "remove"]
print(f"  {'':10} {'warm':>5} {'before':>7} " + " ".join(f"{n:>7}" for n in names) +
      f" {'daemon':>7} {'client':>7} {'prep':>7} {'waited':>7}")
for kind in ("warm", "cold", "warm-b2b", "cold-b2b"):
    if kind not in receipts:
        continue
    taken = receipts[kind]
    daemon = [r["lifecycle"]["timing"]["queued_s"] + r["lifecycle"]["timing"]["total_s"] for r in taken]
    client = [wall - d for wall, d in zip(walls[kind], daemon)] if len(taken) == len(walls[kind]) else [None]
    preparation = [(r["lifecycle"].get("preparation") or {}) for r in taken]
    print(f"  {kind:10} {sum(r['lifecycle']['warm'] for r in taken):2}/{len(taken):<2} "
          f"{med([r['lifecycle']['timing']['queued_s'] for r in taken])} " +
          " ".join(med([phase(r, n) for r in taken]) for n in names) +
          f" {med(daemon)} {med(client)} {med([p.get('total_s') for p in preparation])}"
          f" {med([p.get('waited_s') for p in preparation])}")
if "warm-b2b" in receipts:
    print("back-to-back warm runs, 'before' in order (ms): " +
          " ".join(f"{1000 * r['lifecycle']['timing']['queued_s']:.0f}" for r in receipts["warm-b2b"]))
