"""HTTP/1.1 over pyboxd's unix socket, without I/O of its own: a request's bytes, and a bounded
parser that is fed the answer's bytes as they arrive (the sync and asyncio clients share it).

Bounds: a head of at most 64 KiB and a body of at most 32 MiB (the CLI's bound on an answer),
`Content-Length` or chunked; anything else is a ProtocolError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from . import _errors

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 32 * 1024 * 1024
NDJSON = "application/x-ndjson"
USER_AGENT = "pybox-python/0.1.0"


def request_bytes(method: str, target: str, body: bytes | None, accept: str = "application/json") -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: pybox", f"User-Agent: {USER_AGENT}", f"Accept: {accept}",
             "Connection: close"]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + (body or b"")


@dataclass
class Head:
    status: int
    headers: dict[str, str]  # lower-case names; a repeated header keeps its last value

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class ResponseParser:
    """Fed bytes with feed(); head is set once the header is whole; take_body() returns the
    body bytes decoded so far (not yet taken); done once the body is complete."""

    head: Head | None = None
    done: bool = False
    _buffer: bytearray = field(default_factory=bytearray)
    _body: bytearray = field(default_factory=bytearray)
    _body_total: int = 0
    _remaining: int | None = None  # Content-Length left; None when chunked
    _chunked: bool = False
    _chunk_left: int = 0  # bytes of the current chunk still to come; -1: awaiting the size line
    _trailer: bool = False
    _until_close: bool = False

    def feed(self, data: bytes) -> None:
        if self.done:
            return
        self._buffer += data
        if self.head is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEAD_BYTES:
                    raise _errors.ProtocolError("pyboxd's answer has a header over 64 KiB.")
                return
            self._read_head(bytes(self._buffer[:end]))
            del self._buffer[:end + 4]
        self._read_body()

    def end_of_input(self) -> None:
        """The connection closed: the answer must be complete by now."""
        if self.done:
            return
        if self.head is not None and self._until_close:
            self.done = True
            return
        raise _errors.DaemonLost(
            "pyboxd went away after it took the request (the connection closed before the whole answer came).")

    def take_body(self) -> bytes:
        taken = bytes(self._body)
        self._body.clear()
        return taken

    def _read_head(self, text: bytes) -> None:
        try:
            lines = text.decode("latin-1").split("\r\n")
            version, status, *_ = lines[0].split(" ", 2)
            if not version.startswith("HTTP/1."):
                raise ValueError(version)
            code = int(status)
        except ValueError as error:
            raise _errors.ProtocolError(f"pyboxd's answer does not start as HTTP/1.1 ({error}).") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise _errors.ProtocolError("pyboxd's answer has a malformed header line.")
            headers[name.strip().lower()] = value.strip()
        self.head = Head(code, headers)
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise _errors.ProtocolError(f"pyboxd's answer has the transfer coding {coding!r}.")
            self._chunked = True
            self._chunk_left = -1
        elif "content-length" in headers:
            try:
                self._remaining = int(headers["content-length"])
            except ValueError:
                raise _errors.ProtocolError("pyboxd's answer has a malformed Content-Length.") from None
            if self._remaining < 0 or self._remaining > MAX_BODY_BYTES:
                raise _errors.ProtocolError("pyboxd's answer is larger than 32 MiB.")
        else:
            self._until_close = True

    def _add_body(self, data: bytes | bytearray) -> None:
        self._body_total += len(data)
        if self._body_total > MAX_BODY_BYTES:
            raise _errors.ProtocolError("pyboxd's answer is larger than 32 MiB.")
        self._body += data

    def _read_body(self) -> None:
        if not self._chunked:
            if self._remaining is None:  # until close
                self._add_body(self._buffer)
                self._buffer.clear()
                return
            part = self._buffer[:self._remaining]
            self._add_body(part)
            del self._buffer[:len(part)]
            self._remaining -= len(part)
            if self._remaining == 0:
                self.done = True
            return
        while not self.done:
            if self._trailer:
                end = self._buffer.find(b"\r\n")
                if end < 0:
                    self._check_line_bound()
                    return
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 2]
                if line == b"":
                    self.done = True
                continue
            if self._chunk_left < 0:
                end = self._buffer.find(b"\r\n")
                if end < 0:
                    self._check_line_bound()
                    return
                size_text = bytes(self._buffer[:end]).split(b";", 1)[0].strip()
                del self._buffer[:end + 2]
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise _errors.ProtocolError("pyboxd's answer has a malformed chunk size.") from None
                if size == 0:
                    self._trailer = True
                    continue
                self._chunk_left = size
            if self._chunk_left > 0:
                part = self._buffer[:self._chunk_left]
                if not part:
                    return
                self._add_body(part)
                del self._buffer[:len(part)]
                self._chunk_left -= len(part)
            if self._chunk_left == 0:
                if len(self._buffer) < 2:
                    return
                if self._buffer[:2] != b"\r\n":
                    raise _errors.ProtocolError("pyboxd's answer has a chunk without its CRLF.")
                del self._buffer[:2]
                self._chunk_left = -1

    def _check_line_bound(self) -> None:
        if len(self._buffer) > MAX_HEAD_BYTES:
            raise _errors.ProtocolError("pyboxd's answer has a chunk line over 64 KiB.")


def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise _errors.ProtocolError(f"pyboxd answered with JSON that cannot be read: {error}.") from None


# The failures of an exchange with pyboxd, the same in the threaded and the asyncio client.
def connect_timed_out(path: object) -> _errors.DaemonTimeout:
    return _errors.DaemonTimeout(f"pyboxd at {path} did not accept the connection in time.")


def request_timed_out() -> _errors.DaemonTimeout:
    return _errors.DaemonTimeout("pyboxd did not take the request in time.")


def answer_timed_out() -> _errors.DaemonTimeout:
    return _errors.DaemonTimeout("pyboxd did not answer in time.")


def lost_while_reading(error: OSError) -> _errors.DaemonLost:
    return _errors.DaemonLost(f"pyboxd went away after it took the request (the connection broke while "
                              f"reading the answer: {error.strerror or error}).")


def raise_for_error(head: Head, body: bytes) -> None:
    """Raises the API error of a non-200 answer."""
    if head.status == 200:
        return
    code, message, retryable = "internal_error", f"pyboxd answered HTTP {head.status}.", False
    try:
        error = json.loads(body.decode("utf-8"))["error"]
        code, message, retryable = str(error["code"]), str(error["message"]), bool(error["retryable"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise _errors.ProtocolError(f"pyboxd answered HTTP {head.status} without an error body.") from None
    retry_after: float | None = None
    if (text := head.header("Retry-After")) is not None:
        try:
            retry_after = float(text)
        except ValueError:
            retry_after = None
    raise _errors.refused(head.status, code, message, retryable, retry_after)
