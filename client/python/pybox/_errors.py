"""The exceptions of pybox.

Every failure is a subclass of PyBoxError:

- DaemonUnavailable: pyboxd cannot be reached (no socket, refused, permission denied).
- DaemonLost: the connection broke after pyboxd took the request (a run may have happened:
  `pybox attempts` shows it once the daemon is back).
- ProtocolError: pyboxd answered with something this library cannot read.
- InvalidArgument / LimitExceeded: the library refused the call before sending anything (the
  CLI's checks and limits); `.code` is the API code pyboxd would have answered.
- RequestRefused: an API error answer (docs/api.md, "Errors"), with `.code`, `.message`,
  `.retryable` and `.http_status`; one subclass per API error code (API_ERRORS maps each code to
  its class). A code this library does not know is raised as RequestRefused itself.

The table of codes mirrors pyboxd's one error table (common/api_errors.def); a test checks both
ways that every code has exactly one class with the same status and retryable flag.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "PyBoxError",
    "DaemonUnavailable",
    "DaemonTimeout",
    "DaemonLost",
    "ProtocolError",
    "InvalidArgument",
    "LimitExceeded",
    "RequestRefused",
    "API_ERRORS",
    "refused",
    "InvalidHttp",
    "InvalidJson",
    "InvalidRequest",
    "SourceTooLarge",
    "InputFilesInvalid",
    "TimeoutOutOfRange",
    "OutputLimitOutOfRange",
    "RoundsOutOfRange",
    "UnknownImage",
    "ImageNameInvalid",
    "OwnRecipeInvalid",
    "ClientDisconnected",
    "Forbidden",
    "NoSuchEndpoint",
    "NoSuchReceipt",
    "MethodNotAllowed",
    "ImageNotBuilt",
    "ImageMismatch",
    "ImageMissing",
    "ImagesFileInvalid",
    "ImagesFileFull",
    "RecipeInvalid",
    "LockMissing",
    "LockInvalid",
    "LockOutdated",
    "PackageHashMismatch",
    "LockBusy",
    "SetupBusy",
    "EngineBusy",
    "EngineNotManaged",
    "EngineNoSuchObject",
    "ModelNotConfigured",
    "ReceiptNotVerified",
    "BodyTooLarge",
    "HeaderTooLarge",
    "InternalError",
    "InstallationCorrupt",
    "FileMissing",
    "FileUnreadable",
    "FileUnwritable",
    "TooLarge",
    "IoError",
    "LockUnavailable",
    "SpawnFailed",
    "ProcessGone",
    "ProcessHandleFailed",
    "ImageBuildFailed",
    "CgroupUnknown",
    "CgroupUnsupported",
    "CgroupBusy",
    "CgroupFailed",
    "ClockUnmeasured",
    "WatchOutputInvalid",
    "Cancelled",
    "TransferCodingUnsupported",
    "Busy",
    "TooManyConnections",
    "EngineUnreachable",
    "EngineTimeout",
    "EngineHostKeyRefused",
    "EngineAuthRefused",
    "EngineProtocol",
    "EngineError",
    "EngineStartFailed",
    "EngineStopFailed",
    "EngineCheckFailed",
    "ToolMissing",
    "ToolUntrusted",
    "ColimaTooOld",
    "ColimaFailed",
    "ColimaOutputInvalid",
    "HostKeyPinInvalid",
    "HostKeyUnpinned",
]


class PyBoxError(Exception):
    """The base of every pybox exception."""

    code: str = "pybox_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class DaemonUnavailable(PyBoxError):
    """pyboxd cannot be reached: its socket is missing, refuses connections or may not be used."""

    code = "daemon_not_running"


class DaemonTimeout(PyBoxError):
    """pyboxd did not answer within the call's timeout."""

    code = "daemon_timeout"


class DaemonLost(PyBoxError):
    """The connection broke after pyboxd took the request: the run may have happened."""

    code = "daemon_lost"


class ProtocolError(PyBoxError):
    """pyboxd's answer cannot be read (not HTTP, not JSON, a stream cut short)."""

    code = "daemon_io"


class InvalidArgument(PyBoxError, ValueError):
    """The call was refused before anything was sent; `.code` is the API code pyboxd would answer."""

    code = "invalid_request"


class LimitExceeded(InvalidArgument):
    """A value is past one of the CLI's limits (source, timeout, output limit, input files)."""


class RequestRefused(PyBoxError):
    """pyboxd answered with an error (docs/api.md, "Errors"); nothing ran for a refused run."""

    http_status: int = 0
    retryable: bool = False
    # The class's own code, status and retryable flag, as in pyboxd's error table.
    api_code: ClassVar[str | None] = None

    def __init__(self, message: str, *, code: str, http_status: int, retryable: bool,
                 retry_after: float | None = None) -> None:
        super().__init__(message, code=code)
        self.http_status = http_status
        self.retryable = retryable
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.code} ({self.http_status}): {self.message}"


API_ERRORS: dict[str, type[RequestRefused]] = {}


def _api_error(code: str, status: int, retryable: bool, doc: str) -> type[RequestRefused]:
    name = "".join(part.capitalize() for part in code.split("_"))
    cls = type(name, (RequestRefused,), {
        "__doc__": doc, "api_code": code, "http_status": status, "retryable": retryable,
        "__module__": __name__,
    })
    API_ERRORS[code] = cls
    return cls


# One row per API error code: (code, HTTP status, retryable). The meanings are pyboxd's.
InvalidHttp = _api_error("invalid_http", 400, False, "The request is not valid HTTP/1.1.")
InvalidJson = _api_error("invalid_json", 400, False, "The body is not one valid JSON document.")
InvalidRequest = _api_error("invalid_request", 400, False, "The body has an unknown or duplicate key, a wrong type or a missing value.")
SourceTooLarge = _api_error("source_too_large", 400, False, "`source` is longer than 65,536 bytes.")
InputFilesInvalid = _api_error("input_files_invalid", 400, False, "`files.inputs` breaks a rule.")
TimeoutOutOfRange = _api_error("timeout_out_of_range", 400, False, "`timeout_s` is outside 0.1 to 30 seconds.")
OutputLimitOutOfRange = _api_error("output_limit_out_of_range", 400, False, "`output_limit_bytes` is outside 1 to 65,536.")
RoundsOutOfRange = _api_error("rounds_out_of_range", 400, False, "A repair's `rounds` is not a whole number from 1 to 5.")
UnknownImage = _api_error("unknown_image", 400, False, "The request names an image PyBox has no recipe for.")
ImageNameInvalid = _api_error("image_name_invalid", 400, False, "An own image's name is not valid.")
OwnRecipeInvalid = _api_error("own_recipe_invalid", 400, False, "The recipe is not a valid own-image recipe.")
ClientDisconnected = _api_error("client_disconnected", 400, False, "The client went away before the run began.")
Forbidden = _api_error("forbidden", 403, False, "This user may not use this daemon or endpoint.")
NoSuchEndpoint = _api_error("no_such_endpoint", 404, False, "There is no endpoint at this path.")
NoSuchReceipt = _api_error("no_such_receipt", 404, False, "The daemon keeps no receipt of this run id that the caller may see.")
MethodNotAllowed = _api_error("method_not_allowed", 405, False, "The endpoint exists but not with this method.")
ImageNotBuilt = _api_error("image_not_built", 409, False, "The image has not been built yet; run `pybox setup`.")
ImageMismatch = _api_error("image_mismatch", 409, False, "The image differs from images.json; run `pybox setup`.")
ImageMissing = _api_error("image_missing", 409, False, "The engine no longer has the image; run `pybox setup`.")
ImagesFileInvalid = _api_error("images_file_invalid", 409, False, "images.json is damaged; run `pybox setup`.")
ImagesFileFull = _api_error("images_file_full", 409, False, "images.json records as many images as it may hold.")
RecipeInvalid = _api_error("recipe_invalid", 409, False, "An image's recipe file cannot be read as a recipe.")
LockMissing = _api_error("lock_missing", 409, False, "An image has no lock file.")
LockInvalid = _api_error("lock_invalid", 409, False, "An image's lock file is damaged.")
LockOutdated = _api_error("lock_outdated", 409, False, "An image's lock file can no longer be installed.")
PackageHashMismatch = _api_error("package_hash_mismatch", 409, False, "A downloaded package's SHA-256 differs from the lock.")
LockBusy = _api_error("lock_busy", 409, True, "Another process holds a lock file the daemon needs.")
SetupBusy = _api_error("setup_busy", 409, True, "Another setup, image build or removal is running.")
EngineBusy = _api_error("engine_busy", 409, True, "Another `pybox vm start` or `stop` is in progress.")
EngineNotManaged = _api_error("engine_not_managed", 409, False, "The engine is not PyBox's private one.")
EngineNoSuchObject = _api_error("engine_no_such_object", 409, True, "An engine object was removed behind the daemon's back.")
ModelNotConfigured = _api_error("model_not_configured", 409, False, "A repair needs a model, and config.json names none.")
ReceiptNotVerified = _api_error("receipt_not_verified", 409, False, "The kept receipt file fails its check; it is not served.")
BodyTooLarge = _api_error("body_too_large", 413, False, "The request body is too large.")
HeaderTooLarge = _api_error("header_too_large", 431, False, "The request header is over 16,384 bytes.")
InternalError = _api_error("internal_error", 500, False, "The daemon failed in a way it has no other code for.")
InstallationCorrupt = _api_error("installation_corrupt", 500, False, "The installation id file is damaged.")
FileMissing = _api_error("file_missing", 500, False, "A file the daemon needs does not exist.")
FileUnreadable = _api_error("file_unreadable", 500, False, "A file the daemon needs cannot be read.")
FileUnwritable = _api_error("file_unwritable", 500, False, "A file or folder the daemon keeps cannot be written.")
TooLarge = _api_error("too_large", 500, False, "A file the daemon reads is larger than it may be.")
IoError = _api_error("io_error", 500, False, "An image tar to import cannot be read.")
LockUnavailable = _api_error("lock_unavailable", 500, False, "A lock file cannot be opened or locked.")
SpawnFailed = _api_error("spawn_failed", 500, False, "A helper program could not be started.")
ProcessGone = _api_error("process_gone", 500, False, "A process the daemon tracks ended before it could be watched.")
ProcessHandleFailed = _api_error("process_handle_failed", 500, False, "A process the daemon tracks cannot be opened.")
ImageBuildFailed = _api_error("image_build_failed", 500, False, "Building an image failed.")
CgroupUnknown = _api_error("cgroup_unknown", 500, False, "The engine does not tell its cgroup version or driver.")
CgroupUnsupported = _api_error("cgroup_unsupported", 500, False, "The engine's cgroup driver is not supported.")
CgroupBusy = _api_error("cgroup_busy", 500, False, "A run's cgroup is still in use when it should be empty.")
CgroupFailed = _api_error("cgroup_failed", 500, False, "A run's cgroup cannot be made, read or removed.")
ClockUnmeasured = _api_error("clock_unmeasured", 500, False, "The engine's clock cannot be compared with the daemon's.")
WatchOutputInvalid = _api_error("watch_output_invalid", 500, False, "The resource watcher wrote output the daemon cannot read.")
Cancelled = _api_error("cancelled", 500, False, "An engine call was cancelled because the client went away.")
TransferCodingUnsupported = _api_error("transfer_coding_unsupported", 501, False, "The Transfer-Encoding is not supported.")
Busy = _api_error("busy", 503, True, "The run queue is full, or the run waited its longest in it; nothing ran.")
TooManyConnections = _api_error("too_many_connections", 503, True, "The daemon holds as many connections as it may.")
EngineUnreachable = _api_error("engine_unreachable", 503, True, "The engine is not running or refuses connections.")
EngineTimeout = _api_error("engine_timeout", 503, True, "The engine did not answer in time.")
EngineHostKeyRefused = _api_error("engine_host_key_refused", 503, False, "An ssh engine's host key differs from the pinned one.")
EngineAuthRefused = _api_error("engine_auth_refused", 503, False, "An ssh engine's host refused the identity file.")
EngineProtocol = _api_error("engine_protocol", 503, False, "The engine answered with malformed HTTP or JSON.")
EngineError = _api_error("engine_error", 503, False, "The engine refused a call.")
EngineStartFailed = _api_error("engine_start_failed", 503, False, "The private engine could not be started.")
EngineStopFailed = _api_error("engine_stop_failed", 503, False, "The private engine could not be stopped.")
EngineCheckFailed = _api_error("engine_check_failed", 503, False, "The engine failed PyBox's checks.")
ToolMissing = _api_error("tool_missing", 503, False, "colima or docker is not installed where PyBox looks (macOS).")
ToolUntrusted = _api_error("tool_untrusted", 503, False, "colima or docker may be changed by others (macOS).")
ColimaTooOld = _api_error("colima_too_old", 503, False, "colima is older than 0.10.0 (macOS).")
ColimaFailed = _api_error("colima_failed", 503, False, "A colima command failed or timed out (macOS).")
ColimaOutputInvalid = _api_error("colima_output_invalid", 503, False, "colima reported something PyBox cannot read (macOS).")
HostKeyPinInvalid = _api_error("host_key_pin_invalid", 503, False, "The colima VM's pinned host key file is damaged (macOS).")
HostKeyUnpinned = _api_error("host_key_unpinned", 503, False, "The colima VM's host key is not pinned yet (macOS).")


def refused(http_status: int, code: str, message: str, retryable: bool,
            retry_after: float | None = None) -> RequestRefused:
    """The exception for an API error answer: the code's own class, else RequestRefused."""
    cls = API_ERRORS.get(code, RequestRefused)
    return cls(message, code=code, http_status=http_status, retryable=retryable, retry_after=retry_after)
