"""The answers of the endpoints other than runs (docs/api.md), read tolerantly: unknown keys
ignored, missing ones None. Each keeps the answer's JSON as `json`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = Any


def _get(o: dict[str, Json], key: str, kind: type | tuple[type, ...]) -> Any:
    value = o.get(key)
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        return None
    return value if isinstance(value, kind) else None


@dataclass(frozen=True)
class Image:
    name: str
    image_id: str | None
    recipe_sha256: str | None
    built_at: str | None
    tar_sha256: str | None
    present: bool | None
    present_unknown_because: str | None
    json: dict[str, Json] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, o: dict[str, Json]) -> Image:
        return cls(str(o.get("name", "")), _get(o, "image_id", str), _get(o, "recipe_sha256", str),
                   _get(o, "built_at", str), _get(o, "tar_sha256", str), _get(o, "present", bool),
                   _get(o, "present_unknown_because", str), o)


@dataclass(frozen=True)
class ReceiptSummary:
    """One kept receipt as GET /v1/receipts lists it; when not `signed`, the rest is untrusted."""

    run_id: str
    created_at: str | None
    image: str | None
    exit_code: int | None
    mechanism: str | None
    signed: bool
    bytes: int | None
    owner_uid: int | None
    problem: str | None
    json: dict[str, Json] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, o: dict[str, Json]) -> ReceiptSummary:
        return cls(str(o.get("run_id", "")), _get(o, "created_at", str), _get(o, "image", str),
                   _get(o, "exit_code", int), _get(o, "mechanism", str), o.get("signed") is True,
                   _get(o, "bytes", int), _get(o, "owner_uid", int), _get(o, "problem", str), o)


@dataclass(frozen=True)
class Attempts:
    """GET /v1/attempts: the runs whose end the daemon did not confirm."""

    unsettled: list[dict[str, Json]]
    unsettled_total: int | None
    settled: list[dict[str, Json]]
    damaged_lines: int | None
    json: dict[str, Json] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, o: dict[str, Json]) -> Attempts:
        def items(key: str) -> list[dict[str, Json]]:
            value = o.get(key)
            return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
        return cls(items("unsettled"), _get(o, "unsettled_total", int), items("settled"),
                   _get(o, "damaged_lines", int), o)


@dataclass(frozen=True)
class Status:
    """GET /v1/vm/status: the engine's state (`pybox vm status`)."""

    running: bool | None
    verified: bool | None
    engine_socket: str | None
    private: bool | None
    runtime: str | None
    problems: list[dict[str, Json]]
    notes: list[str]
    pid: int | None
    api_version: str | None
    engines: list[dict[str, Json]]
    json: dict[str, Json] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, o: dict[str, Json]) -> Status:
        def items(key: str) -> list[dict[str, Json]]:
            value = o.get(key)
            return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
        notes = o.get("notes")
        return cls(_get(o, "running", bool), _get(o, "verified", bool), _get(o, "engine_socket", str),
                   _get(o, "private", bool), _get(o, "runtime", str), items("problems"),
                   [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else [],
                   _get(o, "pid", int), _get(o, "api_version", str), items("engines"), o)
