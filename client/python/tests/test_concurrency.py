"""Concurrent runs from threads sharing one Client, and from asyncio tasks."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pybox
import pybox.aio


def test_runs_from_many_threads_on_one_client_each_get_their_own_result(daemon: pybox.Client) -> None:
    client = pybox.Client()
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda i: client.run(f"print({i} * 3)"), range(12)))
    assert [result.stdout_bytes for result in results] == [f"{i * 3}\n".encode() for i in range(12)]
    assert len({result.receipt.run_id for result in results}) == 12


def test_runs_from_many_asyncio_tasks_each_get_their_own_result(daemon: pybox.Client) -> None:
    async def main() -> list[pybox.Result]:
        return await asyncio.gather(*(pybox.aio.run(f"print({i} + 100)") for i in range(8)))
    results = asyncio.run(main())
    assert [result.stdout_bytes for result in results] == [f"{i + 100}\n".encode() for i in range(8)]
    assert len({result.receipt.run_id for result in results}) == 8


def test_streams_from_asyncio_tasks_interleave_without_mixing(daemon: pybox.Client) -> None:
    async def collect(i: int) -> tuple[bytes, pybox.Receipt]:
        data = b""
        async for event in pybox.aio.stream(f"import time\nfor k in range(3):\n    print({i}, k, flush=True)\n"
                                            "    time.sleep(0.05)\n"):
            if isinstance(event, pybox.Output):
                data += event.data
            elif isinstance(event, pybox.Finished):
                return data, event.receipt
        raise AssertionError("no receipt")

    async def main() -> list[tuple[bytes, pybox.Receipt]]:
        return await asyncio.gather(*(collect(i) for i in range(4)))
    for i, (data, receipt) in enumerate(asyncio.run(main())):
        assert data == receipt.capture.stdout == "".join(f"{i} {k}\n" for k in range(3)).encode()
