"""The CLI's limits are checked before anything is sent: over a limit, the call raises and the
daemon sees nothing (its kept receipts are unchanged, and a client pointed at no daemon at all
raises the limit, not DaemonUnavailable)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

import pybox

NOWHERE = pybox.Client(socket_path="/nonexistent/pyboxd.sock")

OVER_LIMITS: list[tuple[str, dict[str, Any], str]] = [
    ("x" * 65_537, {}, "source_too_large"),
    ("#" + "é" * 32_768, {}, "source_too_large"),  # 65,537 bytes of UTF-8 in 32,769 characters
    ("print(1)", {"timeout": 0.09}, "timeout_out_of_range"),
    ("print(1)", {"timeout": 30.001}, "timeout_out_of_range"),
    ("print(1)", {"timeout": float("nan")}, "timeout_out_of_range"),
    ("print(1)", {"output_limit": 0}, "output_limit_out_of_range"),
    ("print(1)", {"output_limit": 65_537}, "output_limit_out_of_range"),
    ("print(1)", {"files": {f"f{i}": b"" for i in range(65)}}, "input_files_invalid"),
    ("print(1)", {"files": {"a": b"x" * (4 << 20), "b": b"x" * ((4 << 20) + 1)}}, "input_files_invalid"),
]


@pytest.mark.parametrize("source,options,code", OVER_LIMITS)
def test_a_request_over_a_limit_is_refused_before_anything_is_sent(daemon: pybox.Client, source: str,
                                                                   options: dict[str, Any], code: str) -> None:
    before = [summary.run_id for summary in pybox.receipts()]
    with pytest.raises(pybox.LimitExceeded) as caught:
        pybox.run(source, **options)
    assert caught.value.code == code
    with pytest.raises(pybox.LimitExceeded):
        NOWHERE.run(source, **options)  # never connects: no DaemonUnavailable
    with pytest.raises(pybox.LimitExceeded):
        pybox.stream(source, **options)  # refused at the call, before the first event is asked for
    assert [summary.run_id for summary in pybox.receipts()] == before


def test_the_limits_themselves_are_accepted(daemon: pybox.Client) -> None:
    source = "print(1)\n#" + "x" * (65_536 - 10)
    assert len(source.encode()) == 65_536
    result = pybox.run(source, timeout=30, output_limit=1)
    assert result.receipt.submission.source_bytes == 65_536 and result.stdout_bytes == b"1"


@pytest.mark.parametrize("call,code", [
    (lambda: NOWHERE.run(b"\xff"), "invalid_request"),
    (lambda: NOWHERE.run("print(1)", image="Not An Image"), "unknown_image"),
    (lambda: NOWHERE.run("print(1)", files={"out/x": b""}), "input_files_invalid"),
    (lambda: NOWHERE.run("print(1)", files={"a/../b": b""}), "input_files_invalid"),
    (lambda: NOWHERE.run("print(1)", files={"a": b"", "a/b": b""}), "input_files_invalid"),
    (lambda: NOWHERE.run("print(1)", files={"x" * 256: b""}), "input_files_invalid"),
    (lambda: NOWHERE.run("print(1)", out_dir="/nonexistent/folder"), "output_folder_invalid"),
    (lambda: NOWHERE.run("print(1)", timeout=True), "timeout_out_of_range"),
    (lambda: NOWHERE.run("print(1)", output_limit=2.5), "output_limit_out_of_range"),  # type: ignore[arg-type]
])
def test_invalid_arguments_are_refused_before_connecting(call: Callable[[], Any], code: str) -> None:
    with pytest.raises(pybox.InvalidArgument) as caught:
        call()
    assert caught.value.code == code


def test_inputs_over_the_byte_cap_on_disk_are_refused_without_reading_them_whole(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as file:
        file.truncate(1 << 40)  # a sparse terabyte: reading it whole would never end
    with pytest.raises(pybox.LimitExceeded) as caught:
        NOWHERE.run("print(1)", files=[big])
    assert caught.value.code == "input_files_invalid"
    os.unlink(big)
