"""pybox.verify against `pybox verify` (the C++ client) on receipts the real daemon signed:
both accept the same receipts and refuse the same tampered ones with the same code."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import pybox
from conftest import run_cli


@pytest.fixture(scope="module")
def signed(daemon: pybox.Client) -> pybox.Receipt:
    return pybox.run("import sys\nprint(6*7)\nprint('é€😀\\x01', file=sys.stderr)").receipt


def cli_verdict(cli: str, text: str | bytes, tmp_path: Path, key: Path | None = None) -> str:
    """"ok", or the code `pybox verify` names."""
    file = tmp_path / "receipt.json"
    file.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    process = run_cli(cli, "verify", str(file), *(["--key", str(key)] if key else []))
    if process.returncode == 0:
        return "ok"
    match = re.search(rb"NOT VERIFIED \((\w+)\)", process.stderr)
    assert match, process.stderr
    assert process.returncode == 1
    return match.group(1).decode()


def py_verdict(text: str | bytes, key: Any = None) -> str:
    try:
        pybox.verify(text, key)
    except pybox.NotVerified as error:
        return error.code
    return "ok"


def test_a_receipt_from_the_daemon_verifies_in_both_and_says_who_signed_it(
        signed: pybox.Receipt, pybox_cli: str, tmp_path: Path, home: Path) -> None:
    verified = pybox.verify(signed)
    assert signed.signature is not None and verified.key_id == signed.signature.key_id
    assert verified.run_id == signed.run_id and verified.schema_version == 1
    assert verified.daemon_version == signed.identity.daemon_version
    assert cli_verdict(pybox_cli, signed.text, tmp_path) == "ok"
    pem = home / "signing_key.pub.pem"
    assert pybox.verify(signed, pem).key_id == verified.key_id
    assert pybox.verify(signed.text.encode(), pem.read_text()).key_id == verified.key_id
    file = tmp_path / "r.json"
    file.write_text(signed.text)
    assert pybox.verify(file).run_id == signed.run_id


def edit(change: Callable[[dict[str, Any]], None]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        receipt = json.loads(text)
        change(receipt)
        return json.dumps(receipt)
    return apply


def set_in(path: list[str], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(receipt: dict[str, Any]) -> None:
        target = receipt
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


TAMPERING: list[tuple[str, Callable[[str], str], str]] = [
    ("unchanged", lambda text: text, "ok"),
    ("reindented and keys reversed", lambda text: json.dumps(dict(reversed(list(json.loads(text).items()))),
                                                             indent=3, ensure_ascii=True), "ok"),
    ("2 spelled 2.0 and 0.5 spelled 5e-1",
     lambda text: text.replace('"wall_timeout_s":2.0', '"wall_timeout_s":2').replace('"cpu_cores":0.5', '"cpu_cores":5E-1'),
     "ok"),
    ("stdout changed", edit(set_in(["capture", "stdout"], "43\n")), "signature_mismatch"),
    ("exit code changed", edit(set_in(["observed", "termination", "exit_code"], 1)), "signature_mismatch"),
    ("a key added", edit(set_in(["added"], 1)), "signature_mismatch"),
    ("a float nudged", edit(set_in(["lifecycle", "timing", "total_s"], 0.1234567)), "signature_mismatch"),
    ("signature removed", edit(lambda r: r.__delitem__("signature")), "not_signed"),
    ("algorithm renamed", edit(set_in(["signature", "algorithm"], "Ed448")), "unknown_algorithm"),
    ("key id changed", edit(set_in(["signature", "key_id"], "0" * 64)), "invalid_signature_block"),
    ("block with an extra key", edit(set_in(["signature", "extra"], "")), "invalid_signature_block"),
    ("value not base64", edit(set_in(["signature", "value"], "!!")), "invalid_signature_block"),
    ("integer no double holds", edit(set_in(["big"], 9007199254740993)), "not_canonical"),
    ("a key repeated", lambda text: text[:-1] + ',"sealed":true}', "not_json"),
    ("not JSON", lambda text: text[:-1], "not_json"),
    ("a number past a double", lambda text: text[:-1] + ',"x":1e400}', "not_canonical"),
    ("an integer past a double", lambda text: text[:-1] + ',"x":1' + "0" * 400 + "}", "not_canonical"),
    ("an integer past 64 bits that a double holds", lambda text: text[:-1] + ',"x":18446744073709551616}',
     "signature_mismatch"),
    ("NaN", lambda text: text[:-1] + ',"x":NaN}', "not_json"),
    ("a lone surrogate", lambda text: text[:-1] + ',"x":"\\ud800"}', "not_json"),
    ("invalid UTF-8", lambda text: text[:-1] + ',"x":"\udcff"}', "not_json"),
    ("not an object", lambda text: "[" + text + "]", "not_a_receipt"),
]


@pytest.mark.parametrize("name,tamper,expected", TAMPERING, ids=[t[0] for t in TAMPERING])
def test_the_cli_and_the_library_agree_on_valid_and_tampered_receipts(
        signed: pybox.Receipt, pybox_cli: str, tmp_path: Path, name: str, tamper: Callable[[str], str],
        expected: str) -> None:
    text = tamper(signed.text)
    if name == "2 spelled 2.0 and 0.5 spelled 5e-1":
        assert text != signed.text
    data = text.encode("utf-8", "surrogateescape")  # "invalid UTF-8" holds the byte 0xff
    assert py_verdict(data) == expected
    assert cli_verdict(pybox_cli, data, tmp_path) == expected


def test_every_top_level_value_changed_fails_in_both(signed: pybox.Receipt, pybox_cli: str, tmp_path: Path) -> None:
    original = json.loads(signed.text)
    for key, value in original.items():
        if key == "signature":
            continue
        changed = dict(original)
        changed[key] = {"changed": True} if not isinstance(value, dict) else {**value, "added": 1}
        text = json.dumps(changed)
        assert py_verdict(text) == "signature_mismatch", key
        assert cli_verdict(pybox_cli, text, tmp_path) == "signature_mismatch", key


def test_another_key_is_wrong_key_in_both(signed: pybox.Receipt, pybox_cli: str, tmp_path: Path) -> None:
    other = Ed25519PrivateKey.generate().public_key()
    pem = other.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    key_file = tmp_path / "other.pem"
    key_file.write_bytes(pem)
    assert py_verdict(signed.text, key_file) == "wrong_key"
    assert py_verdict(signed.text, other) == "wrong_key"
    assert cli_verdict(pybox_cli, signed.text, tmp_path, key_file) == "wrong_key"


def test_a_kept_receipt_verifies_as_the_runs_did(signed: pybox.Receipt) -> None:
    assert pybox.verify(pybox.receipt(signed.run_id or "")).run_id == signed.run_id


def test_an_unreadable_key_raises_key_unreadable(signed: pybox.Receipt, tmp_path: Path) -> None:
    with pytest.raises(pybox.KeyUnreadable):
        pybox.verify(signed, tmp_path / "missing.pem")
    with pytest.raises(pybox.KeyUnreadable):
        pybox.verify(signed, "-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")
