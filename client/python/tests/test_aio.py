"""pybox.aio: the asyncio twins give what the blocking calls give."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import pybox
import pybox.aio


def test_aio_run_returns_a_result_like_run(daemon: pybox.Client) -> None:
    result = asyncio.run(pybox.aio.run("print(6*7)"))
    assert result.stdout_bytes == b"42\n" and result.ok and result.receipt.signature is not None


def test_aio_stream_yields_started_outputs_and_the_receipt_last(daemon: pybox.Client) -> None:
    async def main() -> list[pybox.Event]:
        return [event async for event in pybox.aio.stream("print('a')\nprint('b')")]
    events = asyncio.run(main())
    assert isinstance(events[0], pybox.Started) and isinstance(events[-1], pybox.Finished)
    streamed = b"".join(e.data for e in events if isinstance(e, pybox.Output))
    assert streamed == events[-1].receipt.capture.stdout == b"a\nb\n"


def test_aio_run_with_callbacks_and_files(daemon: pybox.Client, tmp_path: Path) -> None:
    seen: list[bytes] = []
    result = asyncio.run(pybox.aio.run("import os\nos.makedirs('out', exist_ok=True)\nopen('out/r', 'w').write(open('i').read())\n"
                                       "print('done')", files={"i": b"in"}, out_dir=tmp_path,
                                       on_stdout=seen.append))
    assert b"".join(seen) == b"done\n" and (tmp_path / "r").read_bytes() == b"in"
    assert result.files[0].outcome == pybox.Outcome.WRITTEN


def test_aio_queries_answer_as_the_blocking_ones(daemon: pybox.Client) -> None:
    async def main() -> None:
        result = await pybox.aio.run("print(0)")
        kept = await pybox.aio.receipt(result.receipt.run_id or "")
        assert kept.text == result.receipt.text
        assert result.receipt.run_id in [kept.run_id for kept in await pybox.aio.receipts()]
        assert "stdlib" in [image.name for image in await pybox.aio.images()]
        assert (await pybox.aio.status()).running is True
        assert isinstance((await pybox.aio.attempts()).settled, list)
    asyncio.run(main())


def test_aio_errors_are_the_same_exceptions(daemon: pybox.Client, tmp_path: Path) -> None:
    with pytest.raises(pybox.NoSuchReceipt):
        asyncio.run(pybox.aio.receipt("f" * 32))
    with pytest.raises(pybox.DaemonUnavailable):
        asyncio.run(pybox.aio.AsyncClient(socket_path=tmp_path / "none.sock").run("print(1)"))
    with pytest.raises(pybox.LimitExceeded):
        asyncio.run(pybox.aio.AsyncClient(socket_path=tmp_path / "none.sock").run("print(1)", timeout=31))
