"""RFC 8785 as pyboxd writes it, on the C++ tests' vectors (vectors/canonical.json)."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest

import pybox
from pybox._canonical import CanonicalError, parse_strictly

VECTORS: dict[str, Any] = json.loads((Path(__file__).parent / "vectors" / "canonical.json").read_text("utf-8"))


@pytest.mark.parametrize("bits,expected", VECTORS["number_bits"])
def test_numbers_follow_the_es6_samples_of_the_reference_test_file(bits: str, expected: str) -> None:
    number = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert pybox.canonical_json(number) == expected.encode()


@pytest.mark.parametrize("text,expected", VECTORS["texts"] + VECTORS["integers"])
def test_texts_canonicalize_as_rfc_8785_and_its_reference_implementation_say(text: str, expected: str) -> None:
    assert pybox.canonical_json(parse_strictly(text)) == expected.encode("utf-8")


@pytest.mark.parametrize("text", VECTORS["not_canonical_integers"] + VECTORS["not_canonical_texts"])
def test_a_number_no_double_holds_has_no_canonical_form(text: str) -> None:
    with pytest.raises(CanonicalError) as caught:
        pybox.canonical_json(parse_strictly(text))
    assert caught.value.code == "not_canonical"


@pytest.mark.parametrize("text", VECTORS["not_json"])
def test_what_the_strict_reader_refuses_is_not_json(text: str) -> None:
    with pytest.raises(CanonicalError) as caught:
        parse_strictly(text)
    assert caught.value.code == "not_json"


def test_python_repr_spellings_that_differ_from_es6_are_rewritten() -> None:
    assert repr(1e21) == "1e+21" and pybox.es6_number(1e21) == "1e+21"
    assert repr(5e-07) == "5e-07" and pybox.es6_number(5e-07) == "5e-7"
    assert pybox.es6_number(1e20) == "100000000000000000000"
    assert pybox.es6_number(123.0) == "123"
    assert pybox.es6_number(-0.0) == "0"
    assert pybox.es6_number(0.1 + 0.2) == "0.30000000000000004"


def test_random_doubles_read_back_exactly_from_their_canonical_text() -> None:
    generator = random.Random(13)
    for _ in range(20000):
        number = struct.unpack(">d", generator.getrandbits(64).to_bytes(8, "big"))[0]
        if number != number or number in (float("inf"), float("-inf")):
            continue
        assert float(pybox.es6_number(number)) == number
