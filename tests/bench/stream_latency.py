"""The measuring half of tests/bench/stream_latency.sh: argv is N, the daemon's socket, the pybox
client, then the whole `docker run` command line. See the script for what is measured."""
import json
import os
import socket
import statistics
import subprocess
import sys
import time

PROGRAM = "import time\nfor i in range(5):\n    print(time.time_ns(), flush=True)\n    time.sleep(0.1)\n"


def latencies_ms(lines_with_arrival):
    return [(arrived - int(line)) / 1e6 for line, arrived in lines_with_arrival if line.strip().isdigit()]


def via_socket(path):
    body = json.dumps({"source": PROGRAM, "timeout_s": 5}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        conn.sendall(b"POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nAccept: application/x-ndjson\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        pending, seen, head_done = b"", [], False
        while True:
            data = conn.recv(65536)
            if not data:
                break
            now = time.time_ns()
            pending += data
            if not head_done:
                if b"\r\n\r\n" not in pending:
                    continue
                head, pending = pending.split(b"\r\n\r\n", 1)
                head_done = True
            # Chunk framing lines are hex sizes; event lines are JSON objects.
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                line = line.strip(b"\r")
                if not line.startswith(b"{"):
                    continue
                event = json.loads(line)
                if event["event"] == "stdout":
                    seen.append((event["data"], now))
                if event["event"] == "receipt":
                    return latencies_ms(seen)
    raise SystemExit("the stream ended without a receipt")


def via_process(argv):
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    process.stdin.write(PROGRAM.encode())
    process.stdin.close()
    seen = []
    for line in iter(process.stdout.readline, b""):
        seen.append((line.decode(), time.time_ns()))
    process.wait()
    return latencies_ms(seen)


def summary(name, values):
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    print(f"{name:24} median {statistics.median(values):7.2f} ms   p95 {p95:7.2f} ms   max {values[-1]:7.2f} ms   ({len(values)} lines)")


def main():
    runs, sock, pybox, docker = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    env = dict(os.environ)
    ways = {"socket (NDJSON)": [], "pybox exec": [], "docker run --rm -i": []}
    for _ in range(runs):
        ways["socket (NDJSON)"] += via_socket(sock)
        ways["pybox exec"] += via_process([pybox, "exec", "-", "--timeout", "5"])
        ways["docker run --rm -i"] += via_process(docker)
    print(f"print(time.time_ns(), flush=True) in the box -> the line at the client, {runs} runs x 5 lines")
    for name, values in ways.items():
        summary(name, values)


if __name__ == "__main__":
    main()
