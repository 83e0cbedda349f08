"""The daemon pybox talks to, found as `pybox` finds it (common/paths.cpp). No daemon."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pybox import _locate


def make_socket(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("PYBOX_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYBOX_SYSTEM_SOCKET", str(tmp_path / "run" / "pyboxd.sock"))
    return tmp_path


def test_pybox_home_wins_even_without_its_socket(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_socket(env / "home/.pybox/runtime/pyboxd.sock")
    make_socket(env / "run/pyboxd.sock")
    monkeypatch.setenv("PYBOX_HOME", str(env / "named"))
    assert _locate.daemon_socket() == env / "named" / "pyboxd.sock"


def test_the_users_own_daemon_comes_before_the_system_daemon(env: Path) -> None:
    make_socket(env / "home/.pybox/runtime/pyboxd.sock")
    make_socket(env / "run/pyboxd.sock")
    assert _locate.daemon_socket() == env / "home/.pybox/runtime/pyboxd.sock"


def test_the_system_daemon_is_used_when_the_user_has_none(env: Path) -> None:
    make_socket(env / "run/pyboxd.sock")
    assert _locate.daemon_socket() == env / "run/pyboxd.sock"


def test_with_neither_the_users_own_socket_is_named(env: Path) -> None:
    assert _locate.daemon_socket() == env / "home/.pybox/runtime/pyboxd.sock"


def test_the_system_socket_defaults_to_run_pybox(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYBOX_SYSTEM_SOCKET")
    assert _locate._system_socket() == Path("/run/pybox/pyboxd.sock")


def test_the_trusted_key_is_pybox_homes_then_the_users_then_the_systems(env: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    own = env / "home/.pybox/runtime/signing_key.pub.pem"
    own.parent.mkdir(parents=True)
    own.write_text("key")
    assert _locate.local_public_key_file() == own
    monkeypatch.setenv("PYBOX_HOME", str(env / "named"))
    with pytest.raises(Exception) as caught:
        _locate.local_public_key_file()
    assert str(env / "named" / "signing_key.pub.pem") in str(caught.value)
