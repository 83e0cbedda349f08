"""Part (2) of warm_run_parts.sh: R boxes made like a warm box (the stdlib limits and the box
policy but its seccomp profile; created with stdin open, attached, started, waiting in the warm
first step, `perl -e STEP`, whose interpreter is up after the 0.3 s wait), then the timer line and
print(6*7) delivered at once and stdin closed: the time to the first output, to the end of the
attach stream and to the /wait answer. Arguments: engine URL, image ID, R, the first step."""
import socket
import statistics
import sys
import threading
import time

import docker

engine_url, image, repeats, first_step = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
client = docker.DockerClient(base_url=engine_url)
first_output, stream_end, wait_answer = [], [], []
for _ in range(repeats):
    box = client.containers.create(image, command=["perl", "-e", first_step], stdin_open=True, network_disabled=True,
                                   user="10000:10000", read_only=True, mem_limit="128m", memswap_limit="128m",
                                   pids_limit=32, nano_cpus=500_000_000, log_config={"type": "none"},
                                   cap_drop=["ALL"], security_opt=["no-new-privileges"],
                                   ulimits=[docker.types.Ulimit(name="nofile", soft=128, hard=128),
                                            docker.types.Ulimit(name="core", soft=0, hard=0)],
                                   tmpfs={"/tmp": "size=16777216,noexec,nodev,nosuid"})
    try:
        stream = client.api.attach_socket(box.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        box.start()
        answered = {}
        waiter = threading.Thread(target=lambda: (box.wait(), answered.setdefault("at", time.perf_counter())))
        waiter.start()
        time.sleep(0.3)  # the box waits in its first step, as a warm box does
        delivered = time.perf_counter()
        stream._sock.sendall(b"31\nprint(6*7)\n")
        stream._sock.shutdown(socket.SHUT_WR)
        first = None
        while chunk := stream._sock.recv(4096):
            first = first or time.perf_counter()
        ended = time.perf_counter()
        waiter.join()
        first_output.append(first - delivered)
        stream_end.append(ended - delivered)
        wait_answer.append(answered["at"] - delivered)
    finally:
        box.remove(force=True)
for name, values in [("delivery to first output", first_output), ("delivery to end of attach stream", stream_end),
                     ("delivery to /wait answer", wait_answer)]:
    print(f"{name:44} median {1000 * statistics.median(values):6.1f} ms  min {1000 * min(values):6.1f} ms")
