#!/usr/bin/python3
"""What the test cluster must leave as it found it on the host, recorded and compared.

Usage: host_state.py snapshot FILE          (cluster_up.sh, before the namespace starts)
       host_state.py compare FILE CLUSTER_HOME (the k8s_cluster test, while the cluster runs)

Recorded: every global sysctl (/proc/sys/vm, /proc/sys/kernel, /proc/sys/fs; the kubelet sets
some of them; the host's net.* are its network namespace's, which the cluster is not in),
the oom_score_adj of every process of the host's PID namespace (the kubelet moves daemons' to
-999 and lower), and whether the host's mount table (/proc/1/mountinfo) holds anything under the
cluster's home. Counters that move by themselves (entropy, the last PID, pty count, ...) are not
settings and are left out. A process that started or ended between the two readings is not
compared: only one alive at both, the same process (same start time).
"""
import json
import os
import sys

VOLATILE_SYSCTLS = {
    "kernel/ns_last_pid", "kernel/pty/nr", "kernel/tainted",
    "fs/dentry-state", "fs/file-nr", "fs/inode-nr", "fs/inode-state", "fs/aio-nr",
}
VOLATILE_PREFIXES = ("kernel/random/", "fs/quota/")


def sysctls():
    values = {}
    for top in ("vm", "kernel", "fs"):
        for folder, _, files in os.walk(os.path.join("/proc/sys", top)):
            for name in files:
                path = os.path.join(folder, name)
                key = path[len("/proc/sys/"):]
                if key in VOLATILE_SYSCTLS or key.startswith(VOLATILE_PREFIXES):
                    continue
                try:
                    with open(path) as f:
                        values[key] = f.read()
                except OSError:
                    continue  # write-only or refused: not a setting that can be read back
    return values


def host_processes():
    """oom_score_adj of each process in this (the host's) PID namespace, keyed by pid:starttime."""
    own_ns = os.readlink("/proc/self/ns/pid")
    processes = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") != own_ns:
                continue
            with open(f"/proc/{pid}/stat") as f:
                start = f.read().rsplit(")", 1)[1].split()[19]
            with open(f"/proc/{pid}/oom_score_adj") as f:
                processes[f"{pid}:{start}"] = f.read().strip()
        except (OSError, IndexError):
            continue  # ended while read
    return processes


def snapshot():
    return {"sysctls": sysctls(), "oom_score_adj": host_processes()}


def compare(before_file, home):
    with open(before_file) as f:
        before = json.load(f)
    now = snapshot()
    problems = []
    for key, value in before["sysctls"].items():
        if key in now["sysctls"] and now["sysctls"][key] != value:
            problems.append(f"sysctl {key}: {value.strip()!r} -> {now['sysctls'][key].strip()!r}")
    for process, value in before["oom_score_adj"].items():
        if process in now["oom_score_adj"] and now["oom_score_adj"][process] != value:
            problems.append(f"oom_score_adj of host process {process.split(':')[0]}: {value} -> "
                            f"{now['oom_score_adj'][process]}")
    home = os.path.realpath(home)
    with open("/proc/1/mountinfo") as f:
        for line in f:
            mount_point = line.split()[4]
            if mount_point == home or mount_point.startswith(home + "/"):
                problems.append(f"host mount under the cluster's home: {mount_point}")
    compared = (len(before["sysctls"]),
                sum(1 for p in before["oom_score_adj"] if p in now["oom_score_adj"]))
    return problems, compared


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "snapshot":
        with open(sys.argv[2] + ".partial", "w") as f:
            json.dump(snapshot(), f)
        os.replace(sys.argv[2] + ".partial", sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        problems, (sysctl_count, process_count) = compare(sys.argv[2], sys.argv[3])
        for problem in problems:
            print("host_state: changed:", problem, file=sys.stderr)
        print(f"host_state: {sysctl_count} sysctls and the oom_score_adj of {process_count} host processes "
              f"compared, no mount under the home: {'unchanged' if not problems else 'CHANGED'}")
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
