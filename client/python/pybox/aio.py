"""asyncio twins of pybox.run and pybox.stream (and the queries), on asyncio.open_unix_connection:
no threads. An AsyncClient, like Client, holds no connection: each call opens its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncGenerator, Union
from urllib.parse import quote

from . import _errors, _files, _http, _locate, _run
from ._answers import Attempts, Image, ReceiptSummary, Status
from ._client import DEFAULT_TIMEOUT_S, _not_running
from ._receipt import Receipt
from ._run import Event, OutputCallback, Result

__all__ = ["AsyncClient", "run", "stream", "images", "receipts", "receipt", "attempts", "status"]

_READ_BYTES = 65536


class _AsyncExchange:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, deadline: float) -> None:
        self.reader = reader
        self.writer = writer
        self.deadline = deadline
        self.parser = _http.ResponseParser()

    @classmethod
    async def open(cls, path: Path, request: bytes, budget: float) -> _AsyncExchange:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), budget)
        except asyncio.TimeoutError:
            raise _http.connect_timed_out(path) from None
        except OSError as error:
            raise _not_running(path, error) from None
        exchange = cls(reader, writer, deadline)
        try:
            writer.write(request)
            await asyncio.wait_for(writer.drain(), exchange._left())
        except asyncio.TimeoutError:
            await exchange.close()
            raise _http.request_timed_out() from None
        except OSError:
            pass  # a daemon with no room answers 503 without reading the request: read it
        return exchange

    def _left(self) -> float:
        left = self.deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise _http.answer_timed_out()
        return left

    async def read_some(self) -> bool:
        try:
            data = await asyncio.wait_for(self.reader.read(_READ_BYTES), self._left())
        except asyncio.TimeoutError:
            raise _http.answer_timed_out() from None
        except OSError as error:
            raise _http.lost_while_reading(error) from None
        if not data:
            self.parser.end_of_input()
            return False
        self.parser.feed(data)
        return True

    async def read_head(self) -> _http.Head:
        while self.parser.head is None:
            if not await self.read_some():
                break
        assert self.parser.head is not None
        return self.parser.head

    async def read_all(self) -> tuple[_http.Head, bytes]:
        body = bytearray()
        while not self.parser.done:
            if not await self.read_some():
                break
            body += self.parser.take_body()
        body += self.parser.take_body()
        assert self.parser.head is not None
        return self.parser.head, bytes(body)

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


class AsyncClient:
    """The asyncio twin of pybox.Client: the same arguments, answers and exceptions."""

    def __init__(self, socket_path: Union[str, Path, None] = None, timeout: float | None = None) -> None:
        self.socket_path = Path(socket_path) if socket_path is not None else None
        self.timeout = timeout

    def _socket(self) -> Path:
        return self.socket_path if self.socket_path is not None else _locate.daemon_socket()

    async def _exchange(self, method: str, target: str, body: bytes | None) -> tuple[_http.Head, bytes]:
        exchange = await _AsyncExchange.open(self._socket(), _http.request_bytes(method, target, body),
                                             self.timeout if self.timeout is not None else DEFAULT_TIMEOUT_S)
        try:
            head, answer = await exchange.read_all()
        finally:
            await exchange.close()
        _http.raise_for_error(head, answer)
        return head, answer

    async def _call(self, method: str, target: str) -> Any:
        _, answer = await self._exchange(method, target, None)
        return _http.parse_json(answer)

    async def run(self, source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib",
                  output_limit: int = 65536, files: _files.InputFiles | None = None,
                  out_dir: _files.StrPath | None = None, force: bool = False,
                  on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None) -> Result:
        plan = _run.plan_run(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                             out_dir=out_dir, force=force)
        if on_stdout is None and on_stderr is None:
            exchange = await _AsyncExchange.open(self._socket(), _http.request_bytes("POST", "/v1/runs", plan.body),
                                                 plan.budget(self.timeout))
            try:
                head, body = await exchange.read_all()
            finally:
                await exchange.close()
            _http.raise_for_error(head, body)
            return _run.read_answer(plan, body, head.header("PyBox-Receipt-Not-Kept"))
        async for event in self._stream(plan):
            if isinstance(event, _run.Output):
                callback = on_stdout if event.stream == "stdout" else on_stderr
                if callback is not None:
                    callback(event.data)
            elif isinstance(event, _run.Finished):
                return event.result
        raise _errors.DaemonLost("pyboxd's stream of the run ended without its receipt.")

    def stream(self, source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib",
               output_limit: int = 65536, files: _files.InputFiles | None = None,
               out_dir: _files.StrPath | None = None, force: bool = False) -> AsyncGenerator[Event, None]:
        plan = _run.plan_run(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                             out_dir=out_dir, force=force)
        return self._stream(plan)

    async def _stream(self, plan: _run.RunPlan) -> AsyncGenerator[Event, None]:
        exchange = await _AsyncExchange.open(self._socket(),
                                             _http.request_bytes("POST", "/v1/runs", plan.body, _http.NDJSON),
                                             plan.budget(self.timeout))
        try:
            head = await exchange.read_head()
            content_type = (head.header("Content-Type") or "").split(";")[0].strip()
            if head.status != 200 or content_type != _http.NDJSON:
                head, body = await exchange.read_all()
                _http.raise_for_error(head, body)
                yield _run.Finished(_run.read_answer(plan, body, head.header("PyBox-Receipt-Not-Kept")))
                return
            reader = _run.EventReader(plan)
            while True:
                for event in reader.feed(exchange.parser.take_body()):
                    yield event
                if exchange.parser.done or not await exchange.read_some():
                    break
            for event in reader.feed(exchange.parser.take_body()):
                yield event
            reader.end()
        finally:
            await exchange.close()

    async def status(self) -> Status:
        return Status.from_json(await self._call("GET", "/v1/vm/status"))

    async def images(self) -> list[Image]:
        answer = await self._call("GET", "/v1/images")
        return [Image.from_json(item) for item in answer.get("images", []) if isinstance(item, dict)]

    async def receipts(self) -> list[ReceiptSummary]:
        answer = await self._call("GET", "/v1/receipts")
        return [ReceiptSummary.from_json(item) for item in answer.get("receipts", []) if isinstance(item, dict)]

    async def receipt(self, run_id: str) -> Receipt:
        _, body = await self._exchange("GET", "/v1/receipts/" + quote(run_id, safe=""), None)
        return Receipt.from_text(body.rstrip(b"\n"))

    async def attempts(self) -> Attempts:
        return Attempts.from_json(await self._call("GET", "/v1/attempts"))


_default = AsyncClient()


async def run(source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib", output_limit: int = 65536,
              files: _files.InputFiles | None = None, out_dir: _files.StrPath | None = None, force: bool = False,
              on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None) -> Result:
    """pybox.run, awaited."""
    return await _default.run(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                              out_dir=out_dir, force=force, on_stdout=on_stdout, on_stderr=on_stderr)


def stream(source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib", output_limit: int = 65536,
           files: _files.InputFiles | None = None, out_dir: _files.StrPath | None = None,
           force: bool = False) -> AsyncGenerator[Event, None]:
    """pybox.stream as an async iterator: `async for event in pybox.aio.stream(...)`."""
    return _default.stream(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                           out_dir=out_dir, force=force)


async def images() -> list[Image]:
    return await _default.images()


async def receipts() -> list[ReceiptSummary]:
    return await _default.receipts()


async def receipt(run_id: str) -> Receipt:
    return await _default.receipt(run_id)


async def attempts() -> Attempts:
    return await _default.attempts()


async def status() -> Status:
    return await _default.status()
