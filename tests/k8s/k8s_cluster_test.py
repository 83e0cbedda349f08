#!/usr/bin/python3
"""ctest k8s_cluster: the test cluster keeps its contract (docs/testing.md).

With $PYBOX_K8S_HOME/cluster.env from cluster_up.sh, from the host's network namespace:
- the admin kubeconfig's user reaches the apiserver at K8S_SERVER, verified against K8S_CA;
  the nobody user is authenticated and refused (403) listing Pods in K8S_NAMESPACE;
- the apiserver reaches the kubelet's API: the node proxy's configz answers, with the
  podPidsLimit cluster.env gives (K8S_POD_PIDS_LIMIT);
- the sealed Pod (sealed_pod.py) running print(6*7) on K8S_TEST_IMAGE reaches Succeeded, its log
  is "42\\n", its QoS class Guaranteed, and the Localhost seccomp profile was accepted;
- the registry answers /v2/ at K8S_REGISTRY on the host and at the same address inside the
  cluster's network namespace (nsenter -t K8S_NS_PID -n); the node's dockerd at K8S_DOCKER_SOCK;
- apiserver.sh stops the apiserver (K8S_SERVER refuses) and starts it again (it answers);
- the host is as cluster_up.sh found it (host_state.py: sysctls, oom_score_adj, mounts).
Prints one line per check and the measured times; exits 1 on the first failed check.
"""
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sealed_pod import read_env, sealed_pod  # noqa: E402

# This apiserver (1.20 built with Go >= 1.18) can crash on pretty JSON, which it also picks for
# User-Agents starting curl, Wget or Mozilla: always send this one, never ?pretty.
USER_AGENT = "pybox-k8s-cluster-test"


def kubeconfig_files(path):
    """The client certificate and key paths of a kubeconfig that cluster_up.sh wrote."""
    found = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.strip().partition(": ")
            if key in ("client-certificate", "client-key"):
                found[key] = value
    return found["client-certificate"], found["client-key"]


class Api:
    def __init__(self, env, kubeconfig):
        host, port = env["K8S_SERVER"].removeprefix("https://").rsplit(":", 1)
        self.context = ssl.create_default_context(cafile=env["K8S_CA"])
        self.context.load_cert_chain(*kubeconfig_files(kubeconfig))
        self.host, self.port = host, int(port)

    def request(self, method, path, body=None):
        connection = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=20)
        try:
            headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


def check(condition, message):
    if not condition:
        print("k8s_cluster: FAILED:", message, file=sys.stderr)
        sys.exit(1)
    print("k8s_cluster: ok:", message)


def registry_status(address, namespace_pid=None):
    command = ["/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-A", USER_AGENT,
               f"http://{address}/v2/"]
    if namespace_pid:
        command = ["nsenter", "-t", namespace_pid, "-n", "--"] + command
    return subprocess.run(command, capture_output=True, text=True, timeout=20).stdout


def main():
    home = os.environ.get("PYBOX_K8S_HOME", "/tmp/pybox-k8s")
    env = read_env(os.path.join(home, "cluster.env"))
    admin = Api(env, env["K8S_ADMIN_KUBECONFIG"])
    nobody = Api(env, env["K8S_NOBODY_KUBECONFIG"])
    namespace = env["K8S_NAMESPACE"]
    pods = f"/api/v1/namespaces/{namespace}/pods"

    status, body = admin.request("GET", f"/api/v1/namespaces/{namespace}")
    check(status == 200, f"admin reads namespace {namespace} at {env['K8S_SERVER']} ({status})")
    status, body = admin.request("GET", f"/api/v1/nodes/{env['K8S_NODE']}")
    conditions = json.loads(body)["status"]["conditions"] if status == 200 else []
    check(any(c["type"] == "Ready" and c["status"] == "True" for c in conditions), f"node {env['K8S_NODE']} Ready")
    status, _ = nobody.request("GET", pods)
    check(status == 403, f"nobody is refused listing Pods ({status})")
    status, body = admin.request("GET", f"/api/v1/nodes/{env['K8S_NODE']}/proxy/configz")
    pids_limit = json.loads(body).get("kubeletconfig", {}).get("podPidsLimit") if status == 200 else None
    check(pids_limit == int(env["K8S_POD_PIDS_LIMIT"]), f"the kubelet's configz through the apiserver: podPidsLimit {pids_limit}")

    name = f"k8s-cluster-test-{os.getpid()}"
    started = time.monotonic()
    status, body = admin.request("POST", pods, sealed_pod(name, env, "print(6*7)"))
    check(status == 201, f"sealed Pod {name} created ({status}{'' if status == 201 else ': ' + body[:300].decode()})")
    phase, pod = None, {}
    while time.monotonic() - started < 60:
        status, body = admin.request("GET", f"{pods}/{name}")
        pod = json.loads(body)
        phase = pod.get("status", {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            break
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    check(phase == "Succeeded", f"Pod Succeeded, {elapsed:.3f} s after the POST" +
          ("" if phase == "Succeeded" else f" (phase {phase}: {json.dumps(pod.get('status', {}))[:600]})"))
    check(pod["status"].get("qosClass") == "Guaranteed", "QoS class Guaranteed")
    status, log = admin.request("GET", f"{pods}/{name}/log")
    check(status == 200 and log == b"42\n", f"its log is 42 ({status}: {log[:200]!r})")
    status, _ = admin.request("DELETE", f"{pods}/{name}?gracePeriodSeconds=0")
    check(status == 200, f"Pod deleted ({status})")

    check(registry_status(env["K8S_REGISTRY"]) == "200", f"registry /v2/ at {env['K8S_REGISTRY']} from the host")
    check(registry_status(env["K8S_REGISTRY"], env["K8S_NS_PID"]) == "200",
          f"registry /v2/ at {env['K8S_REGISTRY']} inside the cluster's network namespace")
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(env["K8S_DOCKER_SOCK"])
        s.sendall(b"GET /_ping HTTP/1.0\r\nUser-Agent: " + USER_AGENT.encode() + b"\r\n\r\n")
        ping = s.recv(4096)
    check(ping.startswith(b"HTTP/1.") and b" 200 " in ping.split(b"\r\n")[0], "node's dockerd answers at K8S_DOCKER_SOCK")

    apiserver_sh = os.path.join(HERE, "apiserver.sh")
    subprocess.run([apiserver_sh, "stop"], check=True, timeout=90)
    try:
        admin.request("GET", f"/api/v1/namespaces/{namespace}")
        answered = True
    except OSError:
        answered = False
    check(not answered, "apiserver.sh stop: the apiserver does not answer")
    subprocess.run([apiserver_sh, "start"], check=True, timeout=90)
    status, _ = admin.request("GET", f"/api/v1/namespaces/{namespace}")
    check(status == 200, f"apiserver.sh start: the apiserver answers again ({status})")

    unchanged = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "host_state.py"), "compare",
                                os.path.join(home, "host-before.json"), home])
    check(unchanged.returncode == 0, "the host is as cluster_up.sh found it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
