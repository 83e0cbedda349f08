"""The API's error answers arrive as their exception classes, from the real daemon; and a daemon
that is down raises DaemonUnavailable."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

import pybox


def test_an_unknown_run_id_raises_no_such_receipt(daemon: pybox.Client) -> None:
    with pytest.raises(pybox.NoSuchReceipt) as caught:
        pybox.receipt("0" * 32)
    error = caught.value
    assert (error.code, error.http_status, error.retryable) == ("no_such_receipt", 404, False)
    assert isinstance(error, pybox.RequestRefused) and error.message


def test_an_own_image_that_was_never_built_raises_image_not_built(daemon: pybox.Client) -> None:
    with pytest.raises(pybox.ImageNotBuilt) as caught:
        pybox.run("print(1)", image="never-built-here")
    assert caught.value.http_status == 409


@pytest.mark.parametrize("method,target,body,cls", [
    ("POST", "/v1/runs", b'{"source": 1}', pybox.InvalidRequest),
    ("POST", "/v1/runs", b'{"source": "print(1)", "extra": true}', pybox.InvalidRequest),
    ("POST", "/v1/runs", b'{"source": ', pybox.InvalidJson),
    ("POST", "/v1/runs", json.dumps({"source": "x" * 70_000}).encode(), pybox.SourceTooLarge),
    ("POST", "/v1/runs", b'{"source": "print(1)", "image": "Bad_Image"}', pybox.UnknownImage),
    ("POST", "/v1/runs", b'{"source": "print(1)", "timeout_s": 99}', pybox.TimeoutOutOfRange),
    ("POST", "/v1/runs", b'{"source": "print(1)", "output_limit_bytes": 0}', pybox.OutputLimitOutOfRange),
    ("POST", "/v1/runs", b'{"source": "", "files": {"inputs": [{"name": "out", "base64": ""}]}}',
     pybox.InputFilesInvalid),
    ("GET", "/v1/no-such-thing", None, pybox.NoSuchEndpoint),
    ("DELETE", "/v1/ping", None, pybox.MethodNotAllowed),
])
def test_the_daemons_refusals_raise_their_own_classes(daemon: pybox.Client, method: str, target: str,
                                                      body: bytes | None, cls: type[pybox.RequestRefused]) -> None:
    # Past the library's own checks, straight to the socket API, as a newer or careless caller might.
    with pytest.raises(cls) as caught:
        daemon._call(method, target, body)
    assert caught.value.code == cls.api_code and caught.value.http_status == cls.http_status


def test_a_missing_socket_raises_daemon_unavailable(tmp_path: Path) -> None:
    client = pybox.Client(socket_path=tmp_path / "pyboxd.sock")
    with pytest.raises(pybox.DaemonUnavailable) as caught:
        client.run("print(1)")
    assert "not running" in caught.value.message
    with pytest.raises(pybox.DaemonUnavailable):
        client.images()


def test_a_socket_nobody_listens_on_raises_daemon_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "pyboxd.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()  # the file stays; connecting is refused
    with pytest.raises(pybox.DaemonUnavailable):
        pybox.Client(socket_path=path).run("print(1)")


def test_pybox_home_with_no_daemon_raises_daemon_unavailable_from_the_module_functions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYBOX_HOME", str(tmp_path))
    with pytest.raises(pybox.DaemonUnavailable) as caught:
        pybox.run("print(1)")
    assert str(tmp_path / "pyboxd.sock") in caught.value.message


def test_a_relative_pybox_home_is_refused_as_the_cli_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYBOX_HOME", "relative/home")
    with pytest.raises(pybox.DaemonUnavailable) as caught:
        pybox.status()
    assert caught.value.code == "invalid_runtime_dir"


def test_a_daemon_that_closes_mid_answer_raises_daemon_lost(tmp_path: Path) -> None:
    path = tmp_path / "fake.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        connection.close()
    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with pytest.raises(pybox.DaemonLost):
            pybox.Client(socket_path=path, timeout=10).run("print(1)")
    finally:
        thread.join()
        listener.close()


def fake_daemon(path: Path, answer: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A socket that takes one request and answers `answer` (None: never answers, closes later)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        if answer is None:
            connection.recv(1)  # until the client gives up and closes
        else:
            connection.sendall(answer)
        connection.close()
    thread = threading.Thread(target=serve)
    thread.start()
    return listener, thread


def test_a_daemon_that_does_not_answer_in_time_raises_daemon_timeout(tmp_path: Path) -> None:
    listener, thread = fake_daemon(tmp_path / "slow.sock", None)
    try:
        with pytest.raises(pybox.DaemonTimeout):
            pybox.Client(socket_path=tmp_path / "slow.sock", timeout=0.5).status()
    finally:
        thread.join()
        listener.close()


@pytest.mark.parametrize("answer", [
    b"garbage\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{nope",
    b"HTTP/1.1 500 Internal\r\nContent-Length: 2\r\n\r\nno",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nnope\n\r\n0\r\n\r\n",
])
def test_an_answer_that_cannot_be_read_raises_protocol_error(tmp_path: Path, answer: bytes) -> None:
    listener, thread = fake_daemon(tmp_path / "bad.sock", answer)
    try:
        with pytest.raises(pybox.ProtocolError):
            list(pybox.Client(socket_path=tmp_path / "bad.sock", timeout=10).stream("print(1)"))
    finally:
        thread.join()
        listener.close()


def test_a_stream_that_ends_without_its_receipt_raises_daemon_lost(tmp_path: Path) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"21\r\n{\"event\":\"started\",\"run_id\":\"a\"}\n\r\n")
    listener, thread = fake_daemon(tmp_path / "cut.sock", answer)
    try:
        events = pybox.Client(socket_path=tmp_path / "cut.sock", timeout=10).stream("print(1)")
        assert isinstance(next(events), pybox.Started)
        with pytest.raises(pybox.DaemonLost):
            next(events)
    finally:
        thread.join()
        listener.close()
