"""The typed receipt reads both shapes of the receipt (today's and the seed's), ignores keys it
does not know and keeps enumeration values it does not know as their text. No daemon."""

from __future__ import annotations

import json
from typing import Any

import pybox

SEED_SHAPE: dict[str, Any] = {
    "schema_version": 1, "sealed": True, "isolation": "container",
    "identity": {"run_id": "5319e024aa0c4b6e9d1f00112233aabb", "image": "stdlib", "a_new_key": 1},
    "observed": {
        "termination": {"mechanism": "A_MECHANISM_OF_A_NEWER_PYBOXD", "exit_code": 7},
        "resources": {
            "status": "COLLECTED", "final_counters_complete": False, "cgroup_version": 2,
            "metrics": {
                "memory.peak": {"first": 1, "last": 4247552, "max": 4247552, "final": None,
                                "final_source": None, "kernel_file": "memory.peak"},
                "memory.memsw.max_usage_in_bytes": {"first": 1, "last": 2, "max": 3, "final": 3,
                                                    "final_source": "run_parent_after_exit",
                                                    "kernel_file": "memory.memsw.max_usage_in_bytes"},
            },
            "limits_hit": {"pids": False, "cpu_throttled": None, "oom_kill": False},
        },
    },
    "capture": {"stdout": "aGk=", "stdout_encoding": "base64", "stderr": "", "stderr_encoding": "utf-8"},
    "cleanup": {"status": "SOMETHING_NEW", "removed": True},
    "unknown": {"final_resource_counters": True, "exact_termination_cause": False,
                "absolute_clock_alignment": False, "program_end": True},
    "unknown_reasons": {"final_resource_counters": "the box's cgroup was gone", "program_end": "ssh engine"},
    "a_top_level_key_of_a_newer_pyboxd": {"x": [1, 2]},
}


def test_the_seeds_shape_reads_with_metrics_keyed_by_kernel_file_and_unknown_as_booleans() -> None:
    receipt = pybox.Receipt.from_json(SEED_SHAPE)
    resources = receipt.observed.resources
    assert resources.status == pybox.ResourceStatus.COLLECTED and resources.final_counters_complete is False
    assert resources.metrics["memory.peak"].last == 4247552
    assert resources.metrics["memory.peak"].value == 4247552  # no final: the highest sample
    assert resources.metrics["memory.memsw.max_usage_in_bytes"].kernel_file == "memory.memsw.max_usage_in_bytes"
    assert resources.limits_hit == {"pids": False, "cpu_throttled": None, "oom_kill": False}
    unknown = receipt.unknown
    assert unknown.final_resource_counters is True and unknown.exact_termination_cause is False
    assert unknown.absolute_clock_alignment is False
    assert "program_end" in unknown and "exit_code" not in unknown
    assert unknown.reasons["program_end"] == "ssh engine"


def test_unknown_enumeration_values_are_kept_as_their_text() -> None:
    receipt = pybox.Receipt.from_json(SEED_SHAPE)
    assert receipt.observed.termination.mechanism == "A_MECHANISM_OF_A_NEWER_PYBOXD"
    assert receipt.cleanup is not None and receipt.cleanup.status == "SOMETHING_NEW"
    assert pybox._run.exit_code_for(receipt) == 7  # as pybox exec: the exit code the engine reported


def test_the_older_shape_of_unknown_reads_as_true_flags_with_their_reasons() -> None:
    older = dict(SEED_SHAPE, unknown={"resources": "no watcher", "exact_termination_cause": "kill raced exit"})
    del older["unknown_reasons"]
    unknown = pybox.Receipt.from_json(older).unknown
    assert unknown.exact_termination_cause is True and unknown.final_resource_counters is False
    assert unknown.reasons == {"resources": "no watcher", "exact_termination_cause": "kill raced exit"}


def test_the_older_metric_names_read_as_they_are() -> None:
    older = json.loads(json.dumps(SEED_SHAPE))
    older["observed"]["resources"]["status"] = "PARTIAL"
    older["observed"]["resources"]["metrics"] = {"memory_peak_bytes": {"first": 1, "last": 2, "max": 2, "final": 5,
                                                                       "final_source": "box_cgroup_after_exit",
                                                                       "kernel_file": "memory.peak"}}
    resources = pybox.Receipt.from_json(older).observed.resources
    assert resources.status == pybox.ResourceStatus.PARTIAL
    assert resources.metrics["memory_peak_bytes"].value == 5


def test_captured_output_is_decoded_from_its_encoding() -> None:
    receipt = pybox.Receipt.from_json(SEED_SHAPE)
    assert receipt.capture.stdout == b"hi" and receipt.capture.stderr == b""


def test_a_nearly_empty_receipt_reads_without_crashing() -> None:
    receipt = pybox.Receipt.from_text('{"schema_version": 1}')
    assert receipt.identity.run_id is None and receipt.observed.resources.metrics == {}
    assert receipt.unknown.final_resource_counters is False and receipt.files is None


def test_the_environment_beyond_pyboxs_reads_where_observed_and_is_none_where_not() -> None:
    assert pybox.Receipt.from_json(SEED_SHAPE).observed.environment is None
    cluster = json.loads(json.dumps(SEED_SHAPE))
    cluster["observed"]["environment"] = {"source": "the box's first process",
                                          "beyond_spec": ["HOSTNAME=pybox-5319e024", 7, "KUBERNETES_PORT=tcp://10.0.0.1:443"]}
    environment = pybox.Receipt.from_json(cluster).observed.environment
    assert environment == pybox.Environment("the box's first process",
                                            ["HOSTNAME=pybox-5319e024", "KUBERNETES_PORT=tcp://10.0.0.1:443"])
