"""pybox.run and the queries, against the real daemon."""

from __future__ import annotations

from pathlib import Path

import pybox
from conftest import run_cli


def test_run_returns_the_programs_output_exit_code_and_a_signed_typed_receipt(daemon: pybox.Client) -> None:
    result = pybox.run("print(6*7)")
    assert result.stdout_bytes == b"42\n" and result.stdout == "42\n" and result.stderr_bytes == b""
    assert result.exit_code == 0 and result.ok
    receipt = result.receipt
    assert receipt.schema_version == 1 and receipt.sealed and receipt.identity.image == "stdlib"
    assert receipt.observed.termination.mechanism == pybox.Mechanism.TARGET_EXIT_OBSERVED
    assert receipt.observed.termination.exit_code == 0
    assert receipt.cleanup is not None and receipt.cleanup.status == pybox.CleanupStatus.REMOVED
    assert receipt.configured.wall_timeout_s == 2 and receipt.configured.network == "none"
    assert receipt.submission.source_bytes == len("print(6*7)")
    assert receipt.signature is not None and receipt.signature.algorithm == "Ed25519"
    assert receipt.capture.stdout_bytes == 3 and receipt.capture.output_complete
    assert receipt.json["identity"]["run_id"] == receipt.run_id
    assert receipt.text.startswith("{") and receipt.run_id in receipt.text
    assert isinstance(receipt.unknown.final_resource_counters, bool)
    for name, metric in receipt.observed.resources.metrics.items():
        assert isinstance(name, str) and isinstance(metric, pybox.Metric)
    assert receipt.lifecycle.phases and receipt.lifecycle.total_s is not None


def test_a_failing_program_is_a_successful_run_with_its_exit_code_and_stderr(daemon: pybox.Client) -> None:
    result = pybox.run("import sys\nprint('bad', file=sys.stderr)\nsys.exit(3)")
    assert result.exit_code == 3 and not result.ok
    assert result.stderr_bytes == b"bad\n" and result.stderr == "bad\n"


def test_a_program_past_its_deadline_is_stopped_with_exit_code_124(daemon: pybox.Client) -> None:
    result = pybox.run("import time\nprint('a', flush=True)\ntime.sleep(10)", timeout=0.5)
    assert result.receipt.observed.termination.mechanism in (pybox.Mechanism.DEADLINE_KILL,
                                                              pybox.Mechanism.CAUSE_NOT_ESTABLISHED)
    assert result.exit_code in (124, 137) and not result.ok
    assert result.receipt.configured.wall_timeout_s == 0.5
    assert result.stdout_bytes == b"a\n"


def test_output_past_the_limit_is_cut_and_counted(daemon: pybox.Client) -> None:
    result = pybox.run("print('x' * 1000)", output_limit=10)
    assert result.stdout_bytes == b"x" * 10
    capture = result.receipt.capture
    assert (capture.stdout_bytes, capture.stdout_bytes_kept, capture.stdout_bytes_dropped) == (1001, 10, 991)
    assert capture.stdout_truncated is True


def test_output_that_is_not_utf8_comes_back_as_its_exact_bytes(daemon: pybox.Client) -> None:
    result = pybox.run("import sys\nsys.stdout.buffer.write(bytes([0xff, 0x00, 0x41]))")
    assert result.stdout_bytes == b"\xff\x00A"
    assert result.receipt.capture.stdout_encoding == "base64"
    assert result.stdout == "\ufffd\x00A"


def test_the_library_and_the_cli_give_the_same_output_and_exit_code(daemon: pybox.Client, pybox_cli: str) -> None:
    program = "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(5)"
    cli = run_cli(pybox_cli, "exec", "-", stdin=program.encode())
    result = pybox.run(program)
    assert cli.returncode == result.exit_code == 5
    assert cli.stdout == result.stdout_bytes
    assert cli.stderr.startswith(result.stderr_bytes)


def test_bytes_source_runs_as_its_text(daemon: pybox.Client) -> None:
    assert pybox.run(b"print('\xc3\xa9')").stdout == "é\n"


def test_the_kept_receipt_is_the_runs_receipt_byte_for_byte(daemon: pybox.Client) -> None:
    result = pybox.run("print(1)")
    assert result.receipt.run_id is not None
    kept = pybox.receipt(result.receipt.run_id)
    assert kept.text == result.receipt.text
    # Newest first by identity.created_at, which for a warm box is when the box was made.
    listed = {summary.run_id: summary for summary in pybox.receipts()}
    summary = listed[result.receipt.run_id]
    assert summary.signed and summary.image == "stdlib" and summary.created_at == result.receipt.identity.created_at
    assert summary.exit_code == 0 and summary.mechanism == "TARGET_EXIT_OBSERVED"


def test_images_status_attempts_and_ping_answer(daemon: pybox.Client) -> None:
    images = {image.name: image for image in pybox.images()}
    assert "stdlib" in images and images["stdlib"].image_id and images["stdlib"].image_id.startswith("sha256:")
    status = pybox.status()
    assert status.running is True and status.verified is True
    attempts = pybox.attempts()
    assert isinstance(attempts.unsettled, list) and isinstance(attempts.settled, list)
    assert attempts.damaged_lines is not None
    assert pybox.ping()["daemon"] == "pyboxd"


def test_a_client_named_by_socket_path_talks_to_that_daemon(home: Path) -> None:
    client = pybox.Client(socket_path=home / "pyboxd.sock", timeout=60)
    assert client.run("print(2+2)").stdout == "4\n"
