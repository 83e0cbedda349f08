"""The receipt as typed, read-only dataclasses (docs/receipt.md), read tolerantly as docs/api.md
"Versioning" promises a client may: keys it does not know are ignored, enumeration values it
does not know are kept as their text, and a missing key reads as None (or empty). The exact
signed JSON text is kept beside them (`Receipt.text`), and the parsed JSON (`Receipt.json`).

Both shapes of `unknown` read: the older {key: reason} and the newer {key: bool} with the
reasons in the top-level `unknown_reasons`.
"""

from __future__ import annotations

import base64
import json as _json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

from . import _errors

Json = Any


class Mechanism(str, Enum):
    TARGET_EXIT_OBSERVED = "TARGET_EXIT_OBSERVED"
    DEADLINE_KILL = "DEADLINE_KILL"
    CAUSE_NOT_ESTABLISHED = "CAUSE_NOT_ESTABLISHED"
    STOPPED_ON_DISCONNECT = "STOPPED_ON_DISCONNECT"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    NOT_STARTED = "NOT_STARTED"
    ENGINE_LOST = "ENGINE_LOST"


class CleanupStatus(str, Enum):
    REMOVED = "REMOVED"
    NOT_CREATED = "NOT_CREATED"
    REMOVAL_UNCONFIRMED = "REMOVAL_UNCONFIRMED"


class ResourceStatus(str, Enum):
    COLLECTED = "COLLECTED"
    PARTIAL = "PARTIAL"  # older daemons
    UNKNOWN = "UNKNOWN"
    UNREADABLE = "UNREADABLE"


def _enum(kind: type[Enum], value: Json) -> Any:
    if not isinstance(value, str):
        return None
    try:
        return kind(value)
    except ValueError:
        return value  # a value a newer pyboxd added: kept as its text


def _obj(value: Json) -> dict[str, Json]:
    return value if isinstance(value, dict) else {}


def _str(value: Json) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Json) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Json) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _bool(value: Json) -> bool | None:
    return value if isinstance(value, bool) else None


def _strs(value: Json) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


@dataclass(frozen=True)
class Identity:
    run_id: str | None
    installation_id: str | None
    image: str | None
    image_id: str | None
    recipe_sha256: str | None
    created_at: str | None
    expires_at: int | None
    daemon_version: str | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Identity:
        return cls(_str(o.get("run_id")), _str(o.get("installation_id")), _str(o.get("image")),
                   _str(o.get("image_id")), _str(o.get("recipe_sha256")), _str(o.get("created_at")),
                   _int(o.get("expires_at")), _str(o.get("daemon_version")))


@dataclass(frozen=True)
class Engine:
    id: str | None
    address: str | None


@dataclass(frozen=True)
class Submission:
    source_sha256: str | None
    source_bytes: int | None


@dataclass(frozen=True)
class Configured:
    wall_timeout_s: float | int | None
    guest_timer_s: float | int | None
    output_limit_bytes: int | None
    memory_bytes: int | None
    memory_swap_bytes: int | None
    pids: int | None
    cpu_cores: float | int | None
    nano_cpus: int | None
    network: str | None
    user: str | None
    readonly_root: bool | None
    tmpfs: dict[str, Json] | None
    open_files: int | None
    core_dump_bytes: int | None
    log_driver: str | None
    no_new_privileges: bool | None
    capabilities_dropped: str | None
    seccomp: str | None
    seccomp_sha256: str | None
    command: list[str]
    files_helper_sha256: str | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Configured:
        tmpfs = o.get("tmpfs")
        return cls(_num(o.get("wall_timeout_s")), _num(o.get("guest_timer_s")), _int(o.get("output_limit_bytes")),
                   _int(o.get("memory_bytes")), _int(o.get("memory_swap_bytes")), _int(o.get("pids")),
                   _num(o.get("cpu_cores")), _int(o.get("nano_cpus")), _str(o.get("network")), _str(o.get("user")),
                   _bool(o.get("readonly_root")), tmpfs if isinstance(tmpfs, dict) else None,
                   _int(o.get("open_files")), _int(o.get("core_dump_bytes")), _str(o.get("log_driver")),
                   _bool(o.get("no_new_privileges")), _str(o.get("capabilities_dropped")), _str(o.get("seccomp")),
                   _str(o.get("seccomp_sha256")), _strs(o.get("command")), _str(o.get("files_helper_sha256")))


@dataclass(frozen=True)
class Termination:
    mechanism: Mechanism | str | None
    exit_code: int | None
    signal: int | None
    signal_source: str | None
    inferred_signal: int | None
    deadline_kill_sent: bool | None
    deadline_kill_answer: str | None
    deadline_kill_sent_at: str | None
    engine_lifetime_s: float | int | None
    program_end: dict[str, Json] | None
    box_end: dict[str, Json] | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Termination:
        program_end, box_end = o.get("program_end"), o.get("box_end")
        return cls(_enum(Mechanism, o.get("mechanism")), _int(o.get("exit_code")), _int(o.get("signal")),
                   _str(o.get("signal_source")), _int(o.get("inferred_signal")), _bool(o.get("deadline_kill_sent")),
                   _str(o.get("deadline_kill_answer")), _str(o.get("deadline_kill_sent_at")),
                   _num(o.get("engine_lifetime_s")), program_end if isinstance(program_end, dict) else None,
                   box_end if isinstance(box_end, dict) else None)


@dataclass(frozen=True)
class Metric:
    """One kernel counter: `first`, `last`, `max` over the samples, `final` after the run."""

    first: float | int | None
    last: float | int | None
    max: float | int | None
    final: float | int | None
    final_source: str | None
    kernel_file: str | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Metric:
        return cls(_num(o.get("first")), _num(o.get("last")), _num(o.get("max")), _num(o.get("final")),
                   _str(o.get("final_source")), _str(o.get("kernel_file")))

    @property
    def value(self) -> float | int | None:
        """The final value when known, else the highest sample (a lower bound), else None."""
        return self.final if self.final is not None else self.max


@dataclass(frozen=True)
class Resources:
    status: ResourceStatus | str | None
    reason: str | None
    source: str | None
    cgroup_version: int | None
    errors: list[str]
    sample_count: int | None
    final_counters_complete: bool | None
    end: str | None
    metrics: dict[str, Metric]  # keyed as the receipt keys them (cgroup v2 file names in the seed's shape)
    limits_hit: dict[str, bool | None]
    host: str | None
    run_parent: str | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Resources:
        metrics = {name: Metric.from_json(value) for name, value in _obj(o.get("metrics")).items()
                   if isinstance(value, dict)}
        limits = {name: _bool(value) for name, value in _obj(o.get("limits_hit")).items()}
        return cls(_enum(ResourceStatus, o.get("status")), _str(o.get("reason")), _str(o.get("source")),
                   _int(o.get("cgroup_version")), _strs(o.get("errors")), _int(o.get("sample_count")),
                   _bool(o.get("final_counters_complete")), _str(o.get("end")), metrics, limits,
                   _str(o.get("host")), _str(o.get("run_parent")))


@dataclass(frozen=True)
class Environment:
    """What the program's environment held beyond what PyBox set (observed.environment)."""
    source: str | None
    beyond_spec: list[str]  # "NAME=value", in ascending byte order of the names

    @classmethod
    def from_json(cls, o: Json) -> Environment | None:
        return cls(_str(o.get("source")), _strs(o.get("beyond_spec"))) if isinstance(o, dict) else None


@dataclass(frozen=True)
class Observed:
    policy_verified_before_start: bool | None
    effective_policy: dict[str, Json] | None
    engine_state: dict[str, Json] | None
    resources: Resources
    termination: Termination
    environment: Environment | None  # None: not observed (unknown_reasons["environment"] says why)

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Observed:
        policy, state = o.get("effective_policy"), o.get("engine_state")
        return cls(_bool(o.get("policy_verified_before_start")), policy if isinstance(policy, dict) else None,
                   state if isinstance(state, dict) else None, Resources.from_json(_obj(o.get("resources"))),
                   Termination.from_json(_obj(o.get("termination"))), Environment.from_json(o.get("environment")))


def _stream_bytes(text: Json, encoding: Json) -> bytes:
    if not isinstance(text, str):
        return b""
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except ValueError:
            raise _errors.ProtocolError("The receipt's captured output is not valid base64.") from None
    return text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class Capture:
    stdout: bytes
    stderr: bytes
    stdout_encoding: str | None
    stderr_encoding: str | None
    stdout_bytes: int | None
    stderr_bytes: int | None
    stdout_bytes_kept: int | None
    stderr_bytes_kept: int | None
    stdout_bytes_dropped: int | None
    stderr_bytes_dropped: int | None
    stdout_truncated: bool | None
    stderr_truncated: bool | None
    output_complete: bool | None
    stream_error: str | None
    output_limit_bytes: int | None
    provenance: str | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Capture:
        return cls(_stream_bytes(o.get("stdout"), o.get("stdout_encoding")),
                   _stream_bytes(o.get("stderr"), o.get("stderr_encoding")),
                   _str(o.get("stdout_encoding")), _str(o.get("stderr_encoding")),
                   _int(o.get("stdout_bytes")), _int(o.get("stderr_bytes")),
                   _int(o.get("stdout_bytes_kept")), _int(o.get("stderr_bytes_kept")),
                   _int(o.get("stdout_bytes_dropped")), _int(o.get("stderr_bytes_dropped")),
                   _bool(o.get("stdout_truncated")), _bool(o.get("stderr_truncated")),
                   _bool(o.get("output_complete")), _str(o.get("stream_error")),
                   _int(o.get("output_limit_bytes")), _str(o.get("provenance")))


@dataclass(frozen=True)
class Phase:
    name: str | None
    started_s: float | int | None
    duration_s: float | int | None
    outcome: str | None


@dataclass(frozen=True)
class Lifecycle:
    warm: bool | None
    box_started_at: str | None
    preparation: dict[str, Json] | None
    last_phase: str | None
    cancelled: bool | None
    timeouts: list[str]
    phases: list[Phase]
    queued_s: float | int | None
    total_s: float | int | None

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> Lifecycle:
        phases = [Phase(_str(p.get("name")), _num(p.get("started_s")), _num(p.get("duration_s")),
                        _str(p.get("outcome"))) for p in o.get("phases", []) if isinstance(p, dict)] \
            if isinstance(o.get("phases"), list) else []
        timing = _obj(o.get("timing"))
        preparation = o.get("preparation")
        return cls(_bool(o.get("warm")), _str(o.get("box_started_at")),
                   preparation if isinstance(preparation, dict) else None, _str(o.get("last_phase")),
                   _bool(o.get("cancelled")), _strs(o.get("timeouts")), phases, _num(timing.get("queued_s")),
                   _num(timing.get("total_s")))


@dataclass(frozen=True)
class Cleanup:
    status: CleanupStatus | str | None
    removed: bool | None
    attempts: int | None
    error: str | None
    reconciliation: Json


@dataclass(frozen=True)
class FileEntry:
    name: str
    bytes: int | None
    sha256: str | None


@dataclass(frozen=True)
class SkippedFile:
    name: str
    reason: str | None


@dataclass(frozen=True)
class FilesReport:
    inputs: list[FileEntry]
    outputs: list[FileEntry]
    skipped: list[SkippedFile]
    skipped_unlisted: int | None
    errors: list[str]

    @classmethod
    def from_json(cls, o: Mapping[str, Json]) -> FilesReport:
        def entries(value: Json) -> list[FileEntry]:
            return [FileEntry(str(e.get("name", "")), _int(e.get("bytes")), _str(e.get("sha256")))
                    for e in value if isinstance(e, dict)] if isinstance(value, list) else []
        skipped_value = o.get("skipped")
        skipped = [SkippedFile(str(e.get("name", "")), _str(e.get("reason")))
                   for e in skipped_value if isinstance(e, dict)] if isinstance(skipped_value, list) else []
        return cls(entries(o.get("inputs")), entries(o.get("outputs")), skipped, _int(o.get("skipped_unlisted")),
                   _strs(o.get("errors")))


@dataclass(frozen=True)
class Unknown:
    """What PyBox could not know. `flags` holds every key with a boolean (true: not known);
    `reasons` says why for each true one. The seed's three keys are always answered (False when
    the receipt does not name them)."""

    flags: dict[str, bool]
    reasons: dict[str, str]

    @property
    def final_resource_counters(self) -> bool:
        return self.flags.get("final_resource_counters", False)

    @property
    def exact_termination_cause(self) -> bool:
        return self.flags.get("exact_termination_cause", False)

    @property
    def absolute_clock_alignment(self) -> bool:
        return self.flags.get("absolute_clock_alignment", False)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.flags.get(key, False)

    @classmethod
    def from_json(cls, unknown: Mapping[str, Json], unknown_reasons: Mapping[str, Json]) -> Unknown:
        flags: dict[str, bool] = {}
        reasons: dict[str, str] = {}
        for key, value in unknown.items():
            if isinstance(value, bool):  # the seed's shape
                flags[key] = value
            elif isinstance(value, str):  # the older shape: {key: reason}
                flags[key] = True
                reasons[key] = value
        for key, value in unknown_reasons.items():
            if isinstance(value, str):
                reasons[key] = value
        return cls(flags, reasons)


@dataclass(frozen=True)
class Explanation:
    code: str
    message: str
    evidence: dict[str, Json]


@dataclass(frozen=True)
class Signature:
    algorithm: str | None
    key_id: str | None
    public_key: str | None
    value: str | None


@dataclass(frozen=True)
class Receipt:
    """A run's receipt (docs/receipt.md). `text` is the JSON exactly as pyboxd sent it (what
    `pybox verify` and `pybox.verify` check); `json` is it parsed."""

    schema_version: int | None
    sealed: bool
    isolation: str | None
    identity: Identity
    engine: Engine | None
    container_id: str | None
    submission: Submission
    configured: Configured
    observed: Observed
    capture: Capture
    lifecycle: Lifecycle
    cleanup: Cleanup | None
    clock_domains: dict[str, Json]
    unknown: Unknown
    not_applicable: dict[str, Json]
    files: FilesReport | None
    unsealed: dict[str, Json] | None
    explanations: list[Explanation]
    signature: Signature | None
    text: str = field(repr=False)
    json: dict[str, Json] = field(repr=False, compare=False)

    @property
    def run_id(self) -> str | None:
        return self.identity.run_id

    @classmethod
    def from_text(cls, text: str | bytes) -> Receipt:
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError:
                raise _errors.ProtocolError("The receipt is not UTF-8 text.") from None
        try:
            value = _json.loads(text)
        except ValueError as error:
            raise _errors.ProtocolError(f"The receipt is not JSON: {error}.") from None
        if not isinstance(value, dict):
            raise _errors.ProtocolError("The receipt is not a JSON object.")
        return cls.from_json(value, text)

    @classmethod
    def from_json(cls, o: dict[str, Json], text: str | None = None) -> Receipt:
        if text is None:
            text = _json.dumps(o, ensure_ascii=False, separators=(",", ":"))
        engine = o.get("engine")
        cleanup = o.get("cleanup")
        files = o.get("files")
        signature = o.get("signature")
        unsealed = o.get("unsealed")
        explanations = [Explanation(str(e.get("code", "")), str(e.get("message", "")), _obj(e.get("evidence")))
                        for e in o.get("explanations", []) if isinstance(e, dict)] \
            if isinstance(o.get("explanations"), list) else []
        sealed = o.get("sealed")
        return cls(
            schema_version=_int(o.get("schema_version")),
            sealed=sealed if isinstance(sealed, bool) else True,
            isolation=_str(o.get("isolation")),
            identity=Identity.from_json(_obj(o.get("identity"))),
            engine=Engine(_str(engine.get("id")), _str(engine.get("address"))) if isinstance(engine, dict) else None,
            container_id=_str(o.get("container_id")),
            submission=Submission(_str(_obj(o.get("submission")).get("source_sha256")),
                                  _int(_obj(o.get("submission")).get("source_bytes"))),
            configured=Configured.from_json(_obj(o.get("configured"))),
            observed=Observed.from_json(_obj(o.get("observed"))),
            capture=Capture.from_json(_obj(o.get("capture"))),
            lifecycle=Lifecycle.from_json(_obj(o.get("lifecycle"))),
            cleanup=Cleanup(_enum(CleanupStatus, cleanup.get("status")), _bool(cleanup.get("removed")),
                            _int(cleanup.get("attempts")), _str(cleanup.get("error")),
                            cleanup.get("reconciliation")) if isinstance(cleanup, dict) else None,
            clock_domains=_obj(o.get("clock_domains")),
            unknown=Unknown.from_json(_obj(o.get("unknown")), _obj(o.get("unknown_reasons"))),
            not_applicable=_obj(o.get("not_applicable")),
            files=FilesReport.from_json(files) if isinstance(files, dict) else None,
            unsealed=unsealed if isinstance(unsealed, dict) else None,
            explanations=explanations,
            signature=Signature(_str(signature.get("algorithm")), _str(signature.get("key_id")),
                                _str(signature.get("public_key")), _str(signature.get("value")))
            if isinstance(signature, dict) else None,
            text=text,
            json=o,
        )
