"""Shared fixtures. The tests run against the real pyboxd of $PYBOX_HOME (ctest's `python`
entry starts it with the suite's engine fixture), and import pybox from the venv that run.sh
made from the wheel, never from the source tree (PYBOX_TEST_FROM_SOURCE=1 allows it, by hand)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import pybox

HERE = Path(__file__).resolve().parent


def pytest_configure(config: Any) -> None:
    if os.environ.get("PYBOX_TEST_FROM_SOURCE") != "1":
        package = Path(pybox.__file__).resolve().parent
        assert not (package.parent / "pyproject.toml").exists(), f"pybox was imported from its source ({package})"
        assert package.parent.name in ("site-packages", "dist-packages"), f"pybox is not installed ({package})"


@pytest.fixture(scope="session")
def source_tree() -> Path:
    source = os.environ.get("PYBOX_SOURCE")
    if not source:
        pytest.fail("PYBOX_SOURCE (the source tree) is not set")
    return Path(source)


@pytest.fixture(scope="session")
def home() -> Path:
    value = os.environ.get("PYBOX_HOME")
    if not value:
        pytest.fail("PYBOX_HOME (the test daemon's runtime folder) is not set")
    return Path(value)


@pytest.fixture(scope="session")
def pybox_cli() -> str:
    """The C++ client, to compare with."""
    named = os.environ.get("PYBOX_CLIENT") or (os.environ.get("PYBOX_BIN", "") + "/pybox")
    if named and os.access(named, os.X_OK):
        return named
    found = shutil.which("pybox")
    if not found:
        pytest.fail("the pybox client is not found (PYBOX_CLIENT or PYBOX_BIN)")
    return found


@pytest.fixture(scope="session")
def daemon(home: Path) -> pybox.Client:
    client = pybox.Client()
    client.ping()  # the daemon must be up: these tests never skip
    return client


def run_cli(cli: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([cli, *args], input=stdin, capture_output=True, timeout=120)
