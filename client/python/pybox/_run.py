"""The parts of a run that do no I/O, shared by the sync and the asyncio clients: the checks
before sending (the CLI's limits), the request body, reading the answer and the stream's
events into a Result."""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Union

from . import _errors, _files
from ._receipt import Mechanism, Receipt

MAX_SOURCE_BYTES = 65_536
MIN_TIMEOUT_S = 0.1
MAX_TIMEOUT_S = 30.0
MIN_OUTPUT_LIMIT = 1
MAX_OUTPUT_LIMIT = 65_536
# pybox exec's wait for a run's answer: the longest queue wait + twice the deadline + a margin
# that covers the daemon's worst case (client/exec.cpp).
MAX_QUEUE_WAIT_S = 60.0
ANSWER_MARGIN_S = 50.0
_IMAGE_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")

OutputCallback = Callable[[bytes], None]


@dataclass(frozen=True)
class RunPlan:
    """A checked run request: its body, and where its outputs go."""

    body: bytes
    timeout_s: float
    moves_files: bool
    out_dir: Path | None
    force: bool

    def budget(self, client_timeout: float | None) -> float:
        return client_timeout if client_timeout is not None else \
            MAX_QUEUE_WAIT_S + 2 * self.timeout_s + ANSWER_MARGIN_S


def plan_run(source: Union[str, bytes], *, timeout: float, image: str, output_limit: int,
             files: _files.InputFiles | None, out_dir: _files.StrPath | None, force: bool) -> RunPlan:
    """Checks everything `pybox exec` checks before it sends; raises LimitExceeded or
    InvalidArgument (nothing sent) on the first problem."""
    if isinstance(source, (bytes, bytearray)):
        if len(source) > MAX_SOURCE_BYTES:
            raise _errors.LimitExceeded(f"The program is larger than {MAX_SOURCE_BYTES} bytes (got {len(source)}).",
                                        code="source_too_large")
        try:
            text = bytes(source).decode("utf-8")
        except UnicodeDecodeError:
            raise _errors.InvalidArgument("source must be UTF-8 text.", code="invalid_request") from None
    elif isinstance(source, str):
        text = source
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise _errors.InvalidArgument("source must be UTF-8 text (it holds a lone surrogate).",
                                          code="invalid_request") from None
        if size > MAX_SOURCE_BYTES:
            raise _errors.LimitExceeded(f"The program is larger than {MAX_SOURCE_BYTES} bytes (got {size}).",
                                        code="source_too_large")
    else:
        raise _errors.InvalidArgument("source must be str or bytes.", code="invalid_request")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or not MIN_TIMEOUT_S <= timeout <= MAX_TIMEOUT_S:
        raise _errors.LimitExceeded(f"timeout must be between 0.1 and 30 seconds (got {timeout!r}).",
                                    code="timeout_out_of_range")
    if isinstance(output_limit, bool) or not isinstance(output_limit, int) \
            or not MIN_OUTPUT_LIMIT <= output_limit <= MAX_OUTPUT_LIMIT:
        raise _errors.LimitExceeded(f"output_limit must be a whole number from 1 to 65536 (got {output_limit!r}).",
                                    code="output_limit_out_of_range")
    if not isinstance(image, str) or not _IMAGE_NAME.fullmatch(image):
        raise _errors.InvalidArgument(f"image must be stdlib, data or an own image's name ([a-z][a-z0-9-]{{0,31}}); "
                                      f"got {image!r}.", code="unknown_image")
    inputs = _files.collect_input_files(files) if files is not None else None
    if out_dir is not None:
        _files.check_output_folder(out_dir)
    request: dict[str, Any] = {"source": text, "timeout_s": float(timeout), "image": image,
                               "output_limit_bytes": output_limit}
    moves_files = inputs is not None or out_dir is not None
    if moves_files:
        request["files"] = {"inputs": [{"name": name, "base64": base64.b64encode(data).decode("ascii")}
                                       for name, data in (inputs or [])],
                            "outputs": out_dir is not None}
    body = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return RunPlan(body, float(timeout), moves_files, Path(out_dir) if out_dir is not None else None, force)


def member_text(text: str, key: str) -> str | None:
    """The exact text of the value of `key` in the JSON object `text` (top level), or None."""
    decoder = json.JSONDecoder()
    whitespace = " \t\n\r"
    i = 0
    def skip(at: int) -> int:
        while at < len(text) and text[at] in whitespace:
            at += 1
        return at
    i = skip(i)
    if i >= len(text) or text[i] != "{":
        return None
    i = skip(i + 1)
    while i < len(text) and text[i] != "}":
        name, i = decoder.raw_decode(text, i)
        i = skip(i)
        if i >= len(text) or text[i] != ":":
            return None
        start = skip(i + 1)
        _, end = decoder.raw_decode(text, start)
        if name == key:
            return text[start:end]
        i = skip(end)
        if i < len(text) and text[i] == ",":
            i = skip(i + 1)
    return None


def exit_code_for(receipt: Receipt) -> int:
    """The exit code `pybox exec` returns for this receipt (proto/receipt.cpp, exit_code_for)."""
    termination = receipt.observed.termination
    mechanism = termination.mechanism
    code = termination.exit_code
    known = isinstance(mechanism, Mechanism)
    if mechanism == Mechanism.TARGET_EXIT_OBSERVED or not known:
        if code is not None and 0 <= code <= 255:
            return code
        if termination.signal_source == "wait_status" and termination.signal is not None \
                and 0 < termination.signal < 128:
            return 128 + termination.signal
        return 125
    if mechanism == Mechanism.CAUSE_NOT_ESTABLISHED:
        return code if code is not None and 0 <= code <= 255 else 125
    if mechanism == Mechanism.DEADLINE_KILL:
        return 124
    if mechanism == Mechanism.OUT_OF_MEMORY:
        return 137
    return 125


@dataclass(frozen=True)
class Result:
    """What a run gave back: the program's output (`stdout` and `stderr` as text, `stdout_bytes`
    and `stderr_bytes` exactly as the receipt keeps them), the exit code `pybox exec` would
    return, `ok`, the receipt, and the output files."""

    receipt: Receipt
    files: list[_files.OutputFile] = field(default_factory=list)
    receipt_not_kept: str | None = None  # pyboxd's sentence when it could not keep the receipt

    @property
    def stdout(self) -> str:
        """What the program wrote to stdout (as kept), as text: UTF-8, an invalid byte as U+FFFD."""
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def stdout_bytes(self) -> bytes:
        """The exact bytes the receipt keeps of stdout (untrusted: the program chose them)."""
        return self.receipt.capture.stdout

    @property
    def stderr_bytes(self) -> bytes:
        return self.receipt.capture.stderr

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.receipt)

    @property
    def ok(self) -> bool:
        """The program ended by itself with exit code 0."""
        return self.receipt.observed.termination.mechanism == Mechanism.TARGET_EXIT_OBSERVED and self.exit_code == 0


def read_answer(plan: RunPlan, body: str | bytes, receipt_not_kept: str | None) -> Result:
    """A run's 200 answer (the receipt, or {"receipt", "outputs"} for a run that moved files)."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            raise _errors.ProtocolError("pyboxd's answer is not UTF-8.") from None
    text = body.rstrip("\n")
    try:
        answer = json.loads(text)
    except ValueError as error:
        raise _errors.ProtocolError(f"pyboxd's answer is not JSON: {error}.") from None
    if not isinstance(answer, dict):
        raise _errors.ProtocolError("pyboxd's answer is not a JSON object.")
    outputs: list[tuple[str, bytes]] = []
    if plan.moves_files:
        receipt_json = answer.get("receipt")
        receipt_text = member_text(text, "receipt")
        if not isinstance(receipt_json, dict) or receipt_text is None:
            raise _errors.ProtocolError("pyboxd's answer to a run that moves files has no receipt.")
        for item in answer.get("outputs", []) or []:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                    or not isinstance(item.get("base64"), str):
                raise _errors.ProtocolError("pyboxd's answer has a malformed output file.")
            try:
                outputs.append((item["name"], base64.b64decode(item["base64"], validate=True)))
            except ValueError:
                raise _errors.ProtocolError("pyboxd's answer has an output file that is not base64.") from None
    else:
        receipt_json, receipt_text = answer, text
    receipt = Receipt.from_json(receipt_json, receipt_text)
    if plan.out_dir is not None:
        written = _files.write_output_files(plan.out_dir, outputs, plan.force)
    else:
        written = [_files.OutputFile(name, data, _files.Outcome.NOT_WRITTEN, None) for name, data in outputs]
    return Result(receipt, written, receipt_not_kept)


# The events of a streamed run (docs/api.md, "Streamed runs").
@dataclass(frozen=True)
class Started:
    run_id: str
    event: str = "started"


@dataclass(frozen=True)
class Output:
    stream: str  # "stdout" or "stderr"
    data: bytes
    event: str = "output"


@dataclass(frozen=True)
class Finished:
    """Last: the run's result, its receipt exactly as the unstreamed answer holds it."""

    result: Result
    event: str = "receipt"

    @property
    def receipt(self) -> Receipt:
        return self.result.receipt


Event = Union[Started, Output, Finished]


class EventReader:
    """Turns the body of a streamed run, fed as it arrives, into events."""

    MAX_LINE_BYTES = 32 * 1024 * 1024

    def __init__(self, plan: RunPlan) -> None:
        self._plan = plan
        self._buffer = bytearray()
        self.finished: Finished | None = None

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[:end + 1]
            if self.finished is not None:
                raise _errors.ProtocolError("pyboxd's stream of the run goes on after its receipt.")
            event = self._read_line(line)
            if event is not None:
                events.append(event)
        if len(self._buffer) > self.MAX_LINE_BYTES:
            raise _errors.ProtocolError("pyboxd's stream has a line over 32 MiB.")
        return events

    def end(self) -> Finished:
        if self.finished is None:
            raise _errors.DaemonLost("pyboxd's stream of the run ended without its receipt." if not self._buffer
                                     else "pyboxd's stream of the run ended inside a line.")
        return self.finished

    def _read_line(self, line: bytes) -> Event | None:
        try:
            text = line.decode("utf-8")
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError):
            raise _errors.ProtocolError("pyboxd's stream has a line that is not JSON.") from None
        if not isinstance(value, dict):
            raise _errors.ProtocolError("pyboxd's stream has a line that is not an object.")
        kind = value.get("event")
        if kind == "started":
            return Started(str(value.get("run_id", "")))
        if kind in ("stdout", "stderr"):
            data = value.get("data")
            if not isinstance(data, str):
                raise _errors.ProtocolError("pyboxd's stream has an output event without data.")
            if value.get("encoding") == "base64":
                try:
                    raw = base64.b64decode(data, validate=True)
                except ValueError:
                    raise _errors.ProtocolError("pyboxd's stream has output that is not base64.") from None
            else:
                raw = data.encode("utf-8", "surrogatepass")
            return Output(str(kind), raw)
        if kind == "receipt":
            answer_text = member_text(text, "answer")
            if answer_text is None:
                raise _errors.ProtocolError("pyboxd's receipt event has no answer.")
            not_kept = value.get("receipt_not_kept")
            self.finished = Finished(read_answer(self._plan, answer_text,
                                                 not_kept if isinstance(not_kept, str) else None))
            return self.finished
        if kind == "error":
            error = value.get("error")
            if not isinstance(error, dict):
                raise _errors.ProtocolError("pyboxd's error event has no error.")
            raise _errors.refused(200, str(error.get("code", "internal_error")), str(error.get("message", "")),
                                  bool(error.get("retryable", False)))
        return None  # an event a newer pyboxd added
