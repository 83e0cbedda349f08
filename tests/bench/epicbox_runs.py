"""Runs print(6*7) through the epicbox library (https://github.com/StepicOrg/epicbox), one run per
line read from stdin, and answers each with "<seconds> <ok>": the wall time of epicbox.run() in
this process (library call only: the interpreter and `import docker` are paid once, at start)
and whether stdout was 42. Used by warm_vs_cold.sh; needs Debian's python3-docker,
python3-structlog and python3-dateutil (epicbox's dependencies) and an epicbox checkout.
Arguments: checkout, engine URL (unix://...), image ID, memory MiB, pids limit, seconds limit.
The box gets what epicbox can set of PyBox's box policy: the image, memory (no swap), pids, no
network, a read-only root, uid 10000, the CPU-time ulimit and the real-time limit; epicbox has no
CPU quota, capability, seccomp or tmpfs setting."""
import sys
import time

checkout, engine_url, image, memory_mib, pids, seconds = sys.argv[1:7]
sys.path.insert(0, checkout)
import epicbox  # noqa: E402  (from the checkout given)

epicbox.configure(profiles=[epicbox.Profile("python", image, user="10000:10000", read_only=True,
                                            network_disabled=True)],
                  docker_url=engine_url)
limits = {"cputime": int(seconds), "realtime": int(seconds), "memory": int(memory_mib), "processes": int(pids)}
program = b"print(6*7)\n"
for _ in sys.stdin:
    begun = time.perf_counter()
    result = epicbox.run("python", "python3 -I -B -u -", stdin=program, limits=dict(limits))
    ended = time.perf_counter()
    ok = "ok" if result["stdout"] == b"42\n" else "failed"
    print(f"{ended - begun:.4f} {ok}", flush=True)
