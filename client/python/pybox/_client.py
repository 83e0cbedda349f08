"""The blocking client. A Client holds only its socket path and timeout, never a connection:
every call opens its own connection to pyboxd and closes it, so one Client may be used from
many threads at once."""

from __future__ import annotations

import errno
import socket
import time
from pathlib import Path
from typing import Any, Generator, Union
from urllib.parse import quote

from . import _errors, _files, _http, _locate, _run
from ._answers import Attempts, Image, ReceiptSummary, Status
from ._receipt import Receipt

DEFAULT_TIMEOUT_S = 30.0  # calls other than runs
_RECV_BYTES = 65536


def _not_running(path: Path, error: OSError) -> _errors.DaemonUnavailable:
    if isinstance(error, PermissionError):
        return _errors.DaemonUnavailable(
            f"You may not use {path} (permission denied). The system pyboxd serves root and the members of the "
            "pybox group.", code="forbidden")
    if isinstance(error, (FileNotFoundError, ConnectionRefusedError)) or error.errno in (errno.ENOENT,
                                                                                          errno.ECONNREFUSED):
        return _errors.DaemonUnavailable(f"pyboxd is not running at {path}. Start it with: pyboxd &   (or, as a "
                                         "service: systemctl --user start pyboxd)")
    return _errors.DaemonUnavailable(f"Cannot connect to pyboxd at {path}: {error.strerror or error}.",
                                     code="daemon_io")


class _Exchange:
    """One request on a connection of its own, under one deadline."""

    def __init__(self, path: Path, request: bytes, budget: float) -> None:
        self._deadline = time.monotonic() + budget
        self._path = path
        self.parser = _http.ResponseParser()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.settimeout(self._left())
            self._sock.connect(str(path))
        except socket.timeout:
            self._sock.close()
            raise _http.connect_timed_out(path) from None
        except OSError as error:
            self._sock.close()
            raise _not_running(path, error) from None
        try:
            self._sock.settimeout(self._left())
            self._sock.sendall(request)
        except socket.timeout:
            self.close()
            raise _http.request_timed_out() from None
        except OSError:
            pass  # a daemon with no room answers 503 without reading the request: read it

    def _left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise _http.answer_timed_out()
        return left

    def read_some(self) -> bool:
        """Feeds the parser the next bytes; False at the end of the connection."""
        try:
            self._sock.settimeout(self._left())
            data = self._sock.recv(_RECV_BYTES)
        except socket.timeout:
            raise _http.answer_timed_out() from None
        except OSError as error:
            raise _http.lost_while_reading(error) from None
        if not data:
            self.parser.end_of_input()
            return False
        self.parser.feed(data)
        return True

    def read_head(self) -> _http.Head:
        while self.parser.head is None:
            if not self.read_some():
                break
        assert self.parser.head is not None
        return self.parser.head

    def read_all(self) -> tuple[_http.Head, bytes]:
        body = bytearray()
        while not self.parser.done:
            if not self.read_some():
                break
            body += self.parser.take_body()
        body += self.parser.take_body()
        assert self.parser.head is not None
        return self.parser.head, bytes(body)

    def close(self) -> None:
        self._sock.close()


class Client:
    """A client of one pyboxd. `socket_path` None: the daemon `pybox` would use (PYBOX_HOME,
    then the user's own daemon, then the system daemon), looked up at each call. `timeout`: the
    most any one call may take; None: 30 s for queries, and for a run what `pybox exec` waits
    (60 s in the queue + twice the run's timeout + 50 s)."""

    def __init__(self, socket_path: Union[str, "Path", None] = None, timeout: float | None = None) -> None:
        self.socket_path = Path(socket_path) if socket_path is not None else None
        self.timeout = timeout

    def _socket(self) -> Path:
        return self.socket_path if self.socket_path is not None else _locate.daemon_socket()

    def _exchange(self, method: str, target: str, body: bytes | None) -> tuple[_http.Head, bytes]:
        exchange = _Exchange(self._socket(), _http.request_bytes(method, target, body),
                             self.timeout if self.timeout is not None else DEFAULT_TIMEOUT_S)
        try:
            head, answer = exchange.read_all()
        finally:
            exchange.close()
        _http.raise_for_error(head, answer)
        return head, answer

    def _call(self, method: str, target: str, body: bytes | None = None) -> Any:
        _, answer = self._exchange(method, target, body)
        return _http.parse_json(answer)

    # Runs ------------------------------------------------------------------------------------

    def run(self, source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib",
            output_limit: int = 65536, files: _files.InputFiles | None = None,
            out_dir: _files.StrPath | None = None, force: bool = False,
            on_stdout: _run.OutputCallback | None = None,
            on_stderr: _run.OutputCallback | None = None) -> _run.Result:
        """Runs `source` in a fresh sealed box and returns its Result. Everything is checked
        before anything is sent (LimitExceeded, InvalidArgument). With on_stdout or on_stderr
        the run is streamed and each is called with the bytes of its stream as they arrive."""
        plan = _run.plan_run(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                             out_dir=out_dir, force=force)
        if on_stdout is None and on_stderr is None:
            return self._run_whole(plan)
        for event in self._stream(plan):
            if isinstance(event, _run.Output):
                callback = on_stdout if event.stream == "stdout" else on_stderr
                if callback is not None:
                    callback(event.data)
            elif isinstance(event, _run.Finished):
                return event.result
        raise _errors.DaemonLost("pyboxd's stream of the run ended without its receipt.")

    def stream(self, source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib",
               output_limit: int = 65536, files: _files.InputFiles | None = None,
               out_dir: _files.StrPath | None = None, force: bool = False) -> Generator[_run.Event, None, None]:
        """Runs `source` and yields its events as they arrive: Started, Output..., and last
        Finished (with the Result and its receipt). The checks are made at the call, before
        anything is sent; closing the generator early closes the connection, which stops the
        run (pyboxd kills and removes its box)."""
        plan = _run.plan_run(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                             out_dir=out_dir, force=force)
        return self._stream(plan)

    def _run_whole(self, plan: _run.RunPlan) -> _run.Result:
        exchange = _Exchange(self._socket(), _http.request_bytes("POST", "/v1/runs", plan.body),
                             plan.budget(self.timeout))
        try:
            head, body = exchange.read_all()
        finally:
            exchange.close()
        _http.raise_for_error(head, body)
        return _run.read_answer(plan, body, head.header("PyBox-Receipt-Not-Kept"))

    def _stream(self, plan: _run.RunPlan) -> Generator[_run.Event, None, None]:
        exchange = _Exchange(self._socket(), _http.request_bytes("POST", "/v1/runs", plan.body, _http.NDJSON),
                             plan.budget(self.timeout))
        try:
            head = exchange.read_head()
            content_type = (head.header("Content-Type") or "").split(";")[0].strip()
            if head.status != 200 or content_type != _http.NDJSON:
                head, body = exchange.read_all()
                _http.raise_for_error(head, body)
                result = _run.read_answer(plan, body, head.header("PyBox-Receipt-Not-Kept"))
                yield _run.Finished(result)
                return
            reader = _run.EventReader(plan)
            while True:
                yield from reader.feed(exchange.parser.take_body())
                if exchange.parser.done or not exchange.read_some():
                    break
            yield from reader.feed(exchange.parser.take_body())
            reader.end()
        finally:
            exchange.close()

    # Queries ---------------------------------------------------------------------------------

    def ping(self) -> dict[str, Any]:
        answer: dict[str, Any] = self._call("GET", "/v1/ping")
        return answer

    def status(self) -> Status:
        return Status.from_json(self._call("GET", "/v1/vm/status"))

    def images(self) -> list[Image]:
        answer = self._call("GET", "/v1/images")
        return [Image.from_json(item) for item in answer.get("images", []) if isinstance(item, dict)]

    def receipts(self) -> list[ReceiptSummary]:
        answer = self._call("GET", "/v1/receipts")
        return [ReceiptSummary.from_json(item) for item in answer.get("receipts", []) if isinstance(item, dict)]

    def receipt(self, run_id: str) -> Receipt:
        """A kept receipt exactly as the run's answer held it (pyboxd checks it before serving)."""
        _, body = self._exchange("GET", "/v1/receipts/" + quote(run_id, safe=""), None)
        return Receipt.from_text(body.rstrip(b"\n"))

    def attempts(self) -> Attempts:
        return Attempts.from_json(self._call("GET", "/v1/attempts"))
