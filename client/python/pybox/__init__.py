"""pybox: run a Python program in a fresh sealed box through pyboxd, and get back what it
printed and its signed receipt (docs/python.md).

    import pybox
    result = pybox.run("print(6*7)")
    result.stdout            # b"42\\n"
    result.receipt.observed.termination.mechanism
    pybox.verify(result.receipt)

The module-level functions use a default Client, which finds the daemon as `pybox` does
(PYBOX_HOME, then ~/.pybox/runtime, then the system daemon) at every call. `import pybox.aio`
for the asyncio twins (not imported by `import pybox`, which so does not pay for asyncio).
"""

from __future__ import annotations

from typing import Any, Generator, Union

from . import _errors
from ._answers import Attempts, Image, ReceiptSummary, Status
from ._canonical import canonical_json, es6_number
from ._client import Client
from ._errors import *  # noqa: F401,F403  (the exception classes, one per API error code)
from ._errors import (API_ERRORS, DaemonLost, DaemonTimeout, DaemonUnavailable, InvalidArgument, LimitExceeded,
                      ProtocolError, PyBoxError, RequestRefused)
from ._files import InputFiles, Outcome, OutputFile, StrPath
from ._receipt import (Capture, Cleanup, CleanupStatus, Configured, Engine, Explanation, FileEntry, FilesReport,
                       Environment, Identity, Lifecycle, Mechanism, Metric, Observed, Phase, Receipt, Resources,
                       ResourceStatus, Signature, SkippedFile, Submission, Termination, Unknown)
from ._run import (MAX_OUTPUT_LIMIT, MAX_SOURCE_BYTES, MAX_TIMEOUT_S, MIN_OUTPUT_LIMIT, MIN_TIMEOUT_S, Event,
                   Finished, Output, OutputCallback, Result, Started)
from ._files import MAX_INPUT_BYTES, MAX_INPUT_FILES
from ._verify import KeyUnreadable, NotVerified, Verified, verify

__version__ = "0.1.0"

__all__ = [
    "run", "stream", "images", "receipts", "receipt", "attempts", "status", "ping", "verify",
    "Client", "Result", "Event", "Started", "Output", "Finished", "OutputCallback",
    "Receipt", "Identity", "Engine", "Submission", "Configured", "Observed", "Resources", "Metric", "Termination",
    "Environment",
    "Capture", "Lifecycle", "Phase", "Cleanup", "FilesReport", "FileEntry", "SkippedFile", "Unknown", "Explanation",
    "Signature", "Mechanism", "CleanupStatus", "ResourceStatus",
    "Image", "ReceiptSummary", "Attempts", "Status",
    "InputFiles", "OutputFile", "Outcome", "StrPath",
    "Verified", "NotVerified", "KeyUnreadable", "canonical_json", "es6_number",
    "MAX_SOURCE_BYTES", "MIN_TIMEOUT_S", "MAX_TIMEOUT_S", "MIN_OUTPUT_LIMIT", "MAX_OUTPUT_LIMIT", "MAX_INPUT_FILES",
    "MAX_INPUT_BYTES",
]
__all__ += _errors.__all__

_default = Client()


def run(source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib", output_limit: int = 65536,
        files: InputFiles | None = None, out_dir: StrPath | None = None, force: bool = False,
        on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None) -> Result:
    """Runs `source` in a fresh sealed box (Client.run on the default client)."""
    return _default.run(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                        out_dir=out_dir, force=force, on_stdout=on_stdout, on_stderr=on_stderr)


def stream(source: Union[str, bytes], *, timeout: float = 2, image: str = "stdlib", output_limit: int = 65536,
           files: InputFiles | None = None, out_dir: StrPath | None = None, force: bool = False) -> Generator[Event, None, None]:
    """Runs `source` and yields Started, Output... and Finished as they arrive (Client.stream)."""
    return _default.stream(source, timeout=timeout, image=image, output_limit=output_limit, files=files,
                           out_dir=out_dir, force=force)


def images() -> list[Image]:
    """The built images (GET /v1/images)."""
    return _default.images()


def receipts() -> list[ReceiptSummary]:
    """The receipts the daemon keeps, newest first (GET /v1/receipts)."""
    return _default.receipts()


def receipt(run_id: str) -> Receipt:
    """One kept receipt, as the run's answer held it (GET /v1/receipts/RUN_ID)."""
    return _default.receipt(run_id)


def attempts() -> Attempts:
    """The runs whose end the daemon did not confirm (GET /v1/attempts)."""
    return _default.attempts()


def status() -> Status:
    """The engine's state (GET /v1/vm/status), as `pybox vm status` shows it."""
    return _default.status()


def ping() -> dict[str, Any]:
    """pyboxd's version (GET /v1/ping)."""
    return _default.ping()


