"""The exception classes against pyboxd's one error table (common/api_errors.def), both ways, and
docs/python.md's table against it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pybox

ROW = re.compile(r'^PYBOX_API_ERROR\((\w+), (\d{3}), (true|false), "((?:[^"\\]|\\.)*)"\)$')


def read_table(source_tree: Path) -> dict[str, tuple[int, bool]]:
    path = source_tree / "common" / "api_errors.def"
    assert path.exists(), f"{path} is missing: the one error table"
    rows: dict[str, tuple[int, bool]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line.startswith("PYBOX_API_ERROR("):
            continue
        match = ROW.match(line)
        assert match, f"a row not in the table's format: {line!r}"
        code = match.group(1)
        assert code not in rows, f"{code} appears twice in the table"
        rows[code] = (int(match.group(2)), match.group(3) == "true")
    assert len(rows) > 50
    return rows


def test_every_code_in_the_error_table_has_exactly_one_class_with_its_status_and_retryable(source_tree: Path) -> None:
    table = read_table(source_tree)
    for code, (status, retryable) in table.items():
        cls = pybox.API_ERRORS.get(code)
        assert cls is not None, f"no exception class for {code}"
        assert cls.api_code == code
        assert (cls.http_status, cls.retryable) == (status, retryable), code
        assert issubclass(cls, pybox.RequestRefused)
        assert getattr(pybox, cls.__name__) is cls, f"{cls.__name__} is not exported"
    classes = [cls for cls in pybox.API_ERRORS.values()]
    assert len(set(classes)) == len(classes), "two codes share a class"


def test_no_exception_class_names_a_code_outside_the_error_table(source_tree: Path) -> None:
    table = read_table(source_tree)
    extra = set(pybox.API_ERRORS) - set(table)
    assert not extra, f"classes for codes pyboxd never answers: {sorted(extra)}"
    subclasses = {cls.api_code for cls in pybox.RequestRefused.__subclasses__()}
    assert subclasses == set(table)


def test_an_answer_with_a_known_code_raises_its_class_and_an_unknown_code_raises_request_refused() -> None:
    error = pybox._errors.refused(503, "busy", "full", True, 2.0)
    assert isinstance(error, pybox.Busy) and isinstance(error, pybox.RequestRefused)
    assert (error.code, error.message, error.retryable, error.http_status, error.retry_after) == \
        ("busy", "full", True, 503, 2.0)
    newer = pybox._errors.refused(409, "a_code_of_a_newer_pyboxd", "later", False)
    assert type(newer) is pybox.RequestRefused and newer.code == "a_code_of_a_newer_pyboxd"


def test_docs_python_md_lists_exactly_the_codes_of_the_error_table_with_their_classes(source_tree: Path) -> None:
    table = read_table(source_tree)
    text = (source_tree / "docs" / "python.md").read_text(encoding="utf-8")
    documented: dict[str, tuple[str, int, bool]] = {}
    for match in re.finditer(r"^\| `(\w+)` \| `pybox\.(\w+)` \| (\d{3}) \| (yes|no) \|$", text, re.M):
        assert match.group(1) not in documented
        documented[match.group(1)] = (match.group(2), int(match.group(3)), match.group(4) == "yes")
    assert set(documented) == set(table)
    for code, (name, status, retryable) in documented.items():
        assert (status, retryable) == table[code], code
        assert pybox.API_ERRORS[code].__name__ == name, code


@pytest.mark.parametrize("cls", [pybox.DaemonUnavailable, pybox.LimitExceeded, pybox.InvalidArgument,
                                 pybox.RequestRefused, pybox.NotVerified, pybox.DaemonLost, pybox.ProtocolError])
def test_every_pybox_exception_is_a_pybox_error(cls: type) -> None:
    assert issubclass(cls, pybox.PyBoxError)
