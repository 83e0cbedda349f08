#!/usr/bin/python3
"""The sealed Pod of issue 30 ("The Pod"), one definition for the test cluster's smoke test
(k8s_cluster_test.py) and the kubectl baseline (tests/bench/kubectl_run.sh).

Usage: sealed_pod.py overrides CLUSTER_ENV PROGRAM
  prints the Pod's spec as `kubectl run --overrides` JSON (kubectl's container list replaced by
  this one, which keeps stdin open for kubectl's attach).
"""
import json
import sys

# The seed's figures for the stdlib image (issue 30: requests = limits, /tmp 16Mi).
MEMORY = "128Mi"
CPU = "500m"
TMP_SIZE = "16Mi"


def read_env(path):
    """cluster.env's KEY=VALUE lines."""
    env = {}
    with open(path) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                env[key] = value
    return env


def sealed_pod(name, env, program, deadline_seconds=30, stdin=False):
    container = {
        "name": "main",
        "image": env["K8S_TEST_IMAGE"],
        "imagePullPolicy": "IfNotPresent",
        "command": ["python3", "-I", "-B", "-c", program],
        "securityContext": {
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "resources": {"requests": {"memory": MEMORY, "cpu": CPU}, "limits": {"memory": MEMORY, "cpu": CPU}},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    if stdin:
        container.update({"stdin": True, "stdinOnce": True})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": env["K8S_NAMESPACE"], "labels": {"pybox.test": "k8s-cluster"}},
        "spec": {
            "nodeName": env["K8S_NODE"],
            "securityContext": {
                "runAsUser": 10000,
                "runAsGroup": 10000,
                "runAsNonRoot": True,
                "seccompProfile": {"type": "Localhost", "localhostProfile": env["K8S_SECCOMP_PROFILE"]},
            },
            "containers": [container],
            "volumes": [{"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": TMP_SIZE}}],
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "activeDeadlineSeconds": deadline_seconds,
        },
    }


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "overrides":
        pod = sealed_pod("overridden-by-kubectl", read_env(sys.argv[2]), sys.argv[3], stdin=True)
        print(json.dumps({"apiVersion": "v1", "spec": pod["spec"]}))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
