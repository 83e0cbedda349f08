"""Wall time of print(6*7) through the library against `pybox exec -`, interleaved (run by hand,
not by pytest):  PYBOX_HOME=... /usr/bin/python3 bench.py RUNS PYBOX_CLI [EPICBOX_CHECKOUT]

Each round runs, in turn: pybox.run() in this process (the library call; the interpreter and
`import pybox` are paid once), `/usr/bin/python3 -c 'import pybox; pybox.run(...)'` as a fresh
process (what a script pays once per process), `pybox exec -` (the C++ client, a process per
run), and with an epicbox checkout epicbox.run() on the same engine and image through
tests/bench/epicbox_runs.py (its library call). Prints median and p95 of each, in seconds."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pybox


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> None:
    runs, cli = int(sys.argv[1]), sys.argv[2]
    epicbox_checkout = sys.argv[3] if len(sys.argv) > 3 else None
    package = str(Path(pybox.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=package)
    epicbox = None
    if epicbox_checkout:
        home = Path(os.environ["PYBOX_HOME"])
        image = next(i.image_id for i in pybox.images() if i.name == "stdlib")
        source = Path(os.environ["PYBOX_SOURCE"])
        epicbox = subprocess.Popen(
            ["/usr/bin/python3", str(source / "tests/bench/epicbox_runs.py"), epicbox_checkout,
             f"unix://{home}/engine/docker.sock", str(image), "128", "32", "2"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    times: dict[str, list[float]] = {"pybox.run (library call)": [], "python3 -c 'import pybox; pybox.run'": [],
                                     "pybox exec -": []}
    if epicbox:
        times["epicbox.run (library call)"] = []
    for _ in range(runs):
        begun = time.perf_counter()
        assert pybox.run("print(6*7)").stdout == "42\n"
        times["pybox.run (library call)"].append(time.perf_counter() - begun)
        begun = time.perf_counter()
        out = subprocess.run(["/usr/bin/python3", "-c", "import pybox; print(pybox.run('print(6*7)').stdout, end='')"],
                             capture_output=True, env=env, check=True).stdout
        times["python3 -c 'import pybox; pybox.run'"].append(time.perf_counter() - begun)
        assert out == b"42\n", out
        begun = time.perf_counter()
        out = subprocess.run([cli, "exec", "-"], input=b"print(6*7)\n", capture_output=True, check=True).stdout
        times["pybox exec -"].append(time.perf_counter() - begun)
        assert out == b"42\n"
        if epicbox:
            assert epicbox.stdin and epicbox.stdout
            epicbox.stdin.write("run\n")
            epicbox.stdin.flush()
            seconds, ok = epicbox.stdout.readline().split()
            assert ok == "ok"
            times["epicbox.run (library call)"].append(float(seconds))
    if epicbox:
        assert epicbox.stdin
        epicbox.stdin.close()
        epicbox.wait()
    print(json.dumps({name: {"runs": len(v), "median_s": round(statistics.median(v), 4), "p95_s": round(p95(v), 4)}
                      for name, v in times.items()}, indent=1))


if __name__ == "__main__":
    main()
