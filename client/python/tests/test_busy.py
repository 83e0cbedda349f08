"""A full run queue answers busy: the library raises pybox.Busy with the Retry-After, and nothing
ran. The queue is filled with raw requests on connections of their own, closed afterwards
(a run whose client left gives up its place, and the one running is stopped)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

import pybox
from pybox import _http

QUEUE_PLACES = 16  # docs/api.md: at most 16 wait behind the one running


def test_a_full_run_queue_raises_busy_with_retry_after_and_runs_nothing(daemon: pybox.Client, home: Path) -> None:
    body = json.dumps({"source": "import time\ntime.sleep(20)", "timeout_s": 25}).encode()
    held: list[socket.socket] = []
    try:
        for _ in range(QUEUE_PLACES + 2):  # the one running, 16 waiting, and one more: full whatever the timing
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(str(home / "pyboxd.sock"))
            connection.sendall(_http.request_bytes("POST", "/v1/runs", body))
            held.append(connection)
        time.sleep(1.0)  # every request read and in line
        before = [summary.run_id for summary in pybox.receipts()]
        began = time.monotonic()
        with pytest.raises(pybox.Busy) as caught:
            pybox.run("print('never')")
        assert time.monotonic() - began < 5, "busy was not answered at once"
        error = caught.value
        assert (error.code, error.http_status, error.retryable) == ("busy", 503, True)
        assert error.retry_after == 2
        assert [summary.run_id for summary in pybox.receipts()] == before
    finally:
        for connection in held:
            connection.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the queue empties once its clients are gone
        try:
            assert pybox.run("print('after')").stdout == "after\n"
            break
        except pybox.Busy:
            time.sleep(0.5)
    else:
        pytest.fail("the queue did not empty after its clients left")
