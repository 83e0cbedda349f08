"""Streamed runs: events as they happen, started first, the receipt last, and the streamed
bytes exactly the receipt's."""

from __future__ import annotations

import time

import pybox


def test_a_stream_starts_with_started_ends_with_the_receipt_and_its_bytes_are_the_receipts(
        daemon: pybox.Client) -> None:
    program = "import sys\nfor i in range(3):\n    print(i, flush=True)\n    print('e', i, file=sys.stderr, flush=True)\n"
    events = list(pybox.stream(program))
    assert isinstance(events[0], pybox.Started)
    assert isinstance(events[-1], pybox.Finished)
    assert all(isinstance(event, pybox.Output) for event in events[1:-1])
    receipt = events[-1].receipt
    assert events[0].run_id == receipt.run_id
    outputs = [event for event in events if isinstance(event, pybox.Output)]
    assert b"".join(e.data for e in outputs if e.stream == "stdout") == receipt.capture.stdout == b"0\n1\n2\n"
    assert b"".join(e.data for e in outputs if e.stream == "stderr") == receipt.capture.stderr == b"e 0\ne 1\ne 2\n"
    assert events[-1].result.exit_code == 0
    assert pybox.receipt(receipt.run_id or "").text == receipt.text


def test_output_events_arrive_while_the_program_runs(daemon: pybox.Client) -> None:
    program = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second', flush=True)\n"
    arrivals: list[tuple[float, pybox.Event]] = []
    for event in pybox.stream(program, timeout=5):
        arrivals.append((time.monotonic(), event))
    first_output = next(at for at, event in arrivals if isinstance(event, pybox.Output))
    finished = arrivals[-1][0]
    assert finished - first_output > 1.0, "the first output came only with the end of the run"


def test_a_stream_keeps_to_the_output_limit_as_the_receipt_does(daemon: pybox.Client) -> None:
    events = list(pybox.stream("print('y' * 5000)\nprint('z' * 5000)", output_limit=100))
    streamed = b"".join(e.data for e in events if isinstance(e, pybox.Output) and e.stream == "stdout")
    receipt = events[-1].receipt if isinstance(events[-1], pybox.Finished) else None
    assert receipt is not None
    assert streamed == receipt.capture.stdout == b"y" * 100
    assert receipt.capture.stdout_bytes_dropped == 10002 - 100


def test_a_streamed_output_that_is_not_utf8_arrives_as_its_exact_bytes(daemon: pybox.Client) -> None:
    events = list(pybox.stream("import sys\nsys.stdout.buffer.write(b'\\xfe\\xff')"))
    assert b"".join(e.data for e in events if isinstance(e, pybox.Output)) == b"\xfe\xff"


def test_run_calls_on_stdout_and_on_stderr_with_the_bytes_as_they_come(daemon: pybox.Client) -> None:
    out: list[bytes] = []
    err: list[bytes] = []
    result = pybox.run("import sys\nprint('a')\nprint('b', file=sys.stderr)", on_stdout=out.append,
                       on_stderr=err.append)
    assert b"".join(out) == result.stdout_bytes == b"a\n"
    assert b"".join(err) == result.stderr_bytes == b"b\n"


def test_a_refused_streamed_run_raises_before_any_event(daemon: pybox.Client) -> None:
    import pytest
    with pytest.raises(pybox.ImageNotBuilt):
        next(iter(pybox.stream("print(1)", image="never-built-here")))


def test_leaving_a_stream_early_stops_the_run_and_its_box(daemon: pybox.Client) -> None:
    events = pybox.stream("import time\nprint('up', flush=True)\ntime.sleep(20)", timeout=25)
    run_id = None
    began = time.monotonic()
    for event in events:
        if isinstance(event, pybox.Started):
            run_id = event.run_id
        if isinstance(event, pybox.Output):
            break
    events.close()
    assert run_id is not None
    while time.monotonic() - began < 15:
        kept = {summary.run_id: summary for summary in pybox.receipts()}
        if run_id in kept:
            break
        time.sleep(0.2)
    assert kept[run_id].mechanism == "STOPPED_ON_DISCONNECT"
    assert time.monotonic() - began < 15, "the run went on after its client left"
    assert pybox.receipt(run_id).lifecycle.cancelled is True
