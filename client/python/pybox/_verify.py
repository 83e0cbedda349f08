"""pybox.verify: the check `pybox verify` makes (proto/receipt_signature.cpp, client/verify.cpp):
Ed25519 over the RFC 8785 form of the receipt without its `signature`, against a trusted key,
never against the key the receipt carries. Needs Debian's python3-cryptography, imported here
only."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from . import _errors, _locate
from ._canonical import CanonicalError, canonical_json, parse_strictly
from ._receipt import Receipt

MAX_RECEIPT_TEXT_BYTES = 16 << 20
MAX_PUBLIC_KEY_FILE_BYTES = 64 * 1024
ALGORITHM = "Ed25519"
_BLOCK_KEYS = {"algorithm", "key_id", "public_key", "value"}


class NotVerified(_errors.PyBoxError):
    """The receipt does not verify. `.code` is `pybox verify`'s: not_json, not_a_receipt,
    not_signed, unknown_algorithm, invalid_signature_block, wrong_key, not_canonical,
    signature_mismatch."""


class KeyUnreadable(_errors.PyBoxError):
    """The trusted key (or the receipt file) cannot be read at all (`pybox verify` exits 125)."""


@dataclass(frozen=True)
class Verified:
    """What a verified receipt says of itself (from its signed part)."""

    key_id: str
    run_id: str
    created_at: str
    daemon_version: str
    schema_version: int


ReceiptInput = Union[Receipt, str, bytes, "os.PathLike[str]", dict[str, Any]]
KeyInput = Union[bytes, str, "os.PathLike[str]", Any, None]


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()


def _raw_public_key(key: KeyInput) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if key is None:
        key = _locate.local_public_key_file()
    if isinstance(key, Ed25519PublicKey):
        return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    if isinstance(key, (bytes, bytearray)) and len(key) == 32:
        return bytes(key)
    pem: bytes
    if isinstance(key, (bytes, bytearray)):
        pem = bytes(key)
    elif isinstance(key, str) and key.lstrip().startswith("-----BEGIN"):
        pem = key.encode("ascii", "replace")
    elif isinstance(key, (str, os.PathLike)):
        try:
            with open(key, "rb") as file:
                pem = file.read(MAX_PUBLIC_KEY_FILE_BYTES + 1)
        except OSError as error:
            raise KeyUnreadable(f"Cannot read the public key {os.fspath(key)!r}: {error.strerror}.",
                                code="file_unreadable") from None
        if len(pem) > MAX_PUBLIC_KEY_FILE_BYTES:
            raise KeyUnreadable(f"The public key file {os.fspath(key)!r} is too large.", code="too_large")
    else:
        raise KeyUnreadable("public_key must be a PEM (text, bytes or a file), 32 raw bytes or an "
                            "Ed25519PublicKey.", code="invalid_key")
    try:
        loaded = serialization.load_pem_public_key(pem)
    except ValueError as error:
        raise KeyUnreadable(f"The public key is not a PEM public key: {error}.", code="invalid_key") from None
    if not isinstance(loaded, Ed25519PublicKey):
        raise KeyUnreadable("The public key is not an Ed25519 key.", code="invalid_key")
    return loaded.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _receipt_value(receipt: ReceiptInput) -> Any:
    if isinstance(receipt, Receipt):
        text: str | bytes = receipt.text
    elif isinstance(receipt, dict):
        return dict(receipt)
    elif isinstance(receipt, os.PathLike):
        try:
            with open(receipt, "rb") as file:
                text = file.read(MAX_RECEIPT_TEXT_BYTES + 1)
        except OSError as error:
            raise KeyUnreadable(f"Cannot read the receipt {os.fspath(receipt)!r}: {error.strerror}.",
                                code="file_unreadable") from None
        if len(text) > MAX_RECEIPT_TEXT_BYTES:
            raise KeyUnreadable("The receipt file is larger than 16 MiB.", code="too_large")
    else:
        text = receipt
    try:
        return parse_strictly(text)
    except CanonicalError as error:
        raise NotVerified(str(error), code=error.code) from None


def _bad_block(why: str) -> NotVerified:
    return NotVerified(f"The receipt's signature block is not valid: {why}.", code="invalid_signature_block")


def _decoded(text: Any) -> bytes | None:
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None


def verify(receipt: ReceiptInput, public_key: KeyInput = None) -> Verified:
    """Checks a receipt's signature offline, as `pybox verify` does, against `public_key` (a
    PEM as `pybox key show` prints it, its file, 32 raw bytes, or an Ed25519PublicKey), or by
    default this installation's key (the runtime folder's signing_key.pub.pem: $PYBOX_HOME's,
    else ~/.pybox/runtime's, else the system daemon's). `receipt` is a Receipt, its JSON text
    (str or bytes), a path to a file of it, or its parsed dict. Returns what the receipt says of
    itself; raises NotVerified (with `pybox verify`'s code) when it does not verify, and
    KeyUnreadable when the key or the file cannot be read."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    trusted = _raw_public_key(public_key)
    value = _receipt_value(receipt)
    if not isinstance(value, dict):
        raise NotVerified("The JSON is not a receipt: it is not an object.", code="not_a_receipt")
    if "signature" not in value:
        raise NotVerified("The receipt has no signature block: it was not issued by a pyboxd that signs receipts, "
                          "or the block was removed.", code="not_signed")
    block = value["signature"]
    if not isinstance(block, dict):
        raise _bad_block("it is not an object")
    for name in block:
        if name not in _BLOCK_KEYS:
            raise _bad_block(f'it has the unknown key "{name[:64]}"')
    algorithm = block.get("algorithm")
    if algorithm != ALGORITHM:
        shown = algorithm if isinstance(algorithm, str) else ""
        raise NotVerified(f'The receipt is signed with "{shown[:64]}", which this pybox does not know (it knows '
                          "Ed25519).", code="unknown_algorithm")
    signer_key = _decoded(block.get("public_key"))
    if signer_key is None or len(signer_key) != 32:
        raise _bad_block("public_key is not the base64 of 32 bytes")
    signature = _decoded(block.get("value"))
    if signature is None or len(signature) != 64:
        raise _bad_block("value is not the base64 of 64 bytes")
    signer = key_id(signer_key)
    if block.get("key_id") != signer:
        raise _bad_block("key_id is not the SHA-256 of public_key")
    if signer_key != trusted:
        raise NotVerified(f"The receipt was signed by key {signer}, not by the trusted key {key_id(trusted)}: it comes "
                          "from another installation (give its public key if you trust it), or its block was "
                          "replaced.", code="wrong_key")
    unsigned = {name: item for name, item in value.items() if name != "signature"}
    try:
        canonical = canonical_json(unsigned)
    except CanonicalError as error:
        raise NotVerified(str(error), code=error.code) from None
    try:
        Ed25519PublicKey.from_public_bytes(signer_key).verify(signature, canonical)
    except InvalidSignature:
        raise NotVerified(f"The signature does not match the receipt's content: the receipt was changed after key "
                          f"{signer} signed it.", code="signature_mismatch") from None
    identity_value = unsigned.get("identity")
    identity: dict[str, Any] = identity_value if isinstance(identity_value, dict) else {}
    def text(key: str) -> str:
        item = identity.get(key)
        return item if isinstance(item, str) else ""
    schema = unsigned.get("schema_version")
    return Verified(signer, text("run_id"), text("created_at"), text("daemon_version"),
                    schema if isinstance(schema, int) and not isinstance(schema, bool) else 0)
