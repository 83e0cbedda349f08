"""Files in and out of a run, with the CLI's rules (client/files_in.cpp, client/files_out.cpp,
proto/files.cpp): the same names, limits and refusals, checked before anything is sent; and the
outputs written below the folder the caller named, never outside it, never replacing anything
but a regular file, and that only with force.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Iterable, Mapping, Union

from . import _errors

MAX_INPUT_FILES = 64
MAX_INPUT_BYTES = 8 * 1024 * 1024
MAX_FILE_NAME_BYTES = 255
OUTPUT_FOLDER_NAME = "out"
_TEMPORARY_PREFIX = ".pybox-"
_TEMPORARY_SUFFIX = ".tmp"

StrPath = Union[str, "os.PathLike[str]"]
# Inputs: {name in the box: bytes (or text, sent as UTF-8)}, or paths read as `pybox exec --in`.
InputFiles = Union[Mapping[str, Union[bytes, str]], Iterable[StrPath]]


def _invalid(message: str) -> _errors.LimitExceeded:
    return _errors.LimitExceeded(message, code="input_files_invalid")


def file_name_problem(name: str) -> str:
    """Why `name` cannot name a file in the box ("" when it can): proto/files.cpp's rules."""
    if not name:
        return "A file name must not be empty."
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        return "A file name must be UTF-8 text."
    if len(encoded) > MAX_FILE_NAME_BYTES:
        return f"A file name must be at most {MAX_FILE_NAME_BYTES} bytes (got {len(encoded)})."
    if any(byte < 0x20 or byte == 0x7F for byte in encoded):
        return "A file name must not hold control characters (NUL, newline, tab, ...)."
    if name.startswith("/"):
        return "A file name must be relative to the working folder, not start with '/'."
    for part in name.split("/"):
        if not part:
            return "A file name must not hold an empty folder name ('//' or a trailing '/')."
        if part in (".", ".."):
            return "A file name must not hold '.' or '..' as a folder or file name."
    return ""


def is_in_output_folder(name: str) -> bool:
    return name == OUTPUT_FOLDER_NAME or name.startswith(OUTPUT_FOLDER_NAME + "/")


def _shown(name: str) -> str:
    return repr(name[:80])


def check_input_names(names: list[str], sizes: list[int] | None = None) -> None:
    """proto::check_file_set plus the output folder rule; sizes when the bytes are known."""
    if len(names) > MAX_INPUT_FILES:
        raise _invalid(f"At most {MAX_INPUT_FILES} input files are allowed (got {len(names)}).")
    seen: set[str] = set()
    for name in names:
        if problem := file_name_problem(name):
            raise _invalid(f"input {_shown(name)}: {problem}")
        if name in seen:
            raise _invalid(f"input {_shown(name)}: The name appears twice.")
        seen.add(name)
    for name in sorted(seen):
        for index, char in enumerate(name):
            if char == "/" and name[:index] in seen:
                raise _invalid(f"input {_shown(name[:index])}: The name is also a folder of {_shown(name)}.")
    if sizes is not None and sum(sizes) > MAX_INPUT_BYTES:
        raise _invalid(f"The input files hold {sum(sizes)} bytes; at most {MAX_INPUT_BYTES} are allowed.")
    for name in names:
        if is_in_output_folder(name):
            raise _invalid(f"input {_shown(name)}: \"out\" is the output folder inside the box; rename the input.")


def _add(sources: list[tuple[str, Path, bool]], name: str, path: Path, in_folder: bool) -> None:
    if len(sources) == MAX_INPUT_FILES:
        raise _invalid(f"At most {MAX_INPUT_FILES} input files are allowed; {str(path)!r} would be one more.")
    sources.append((name, path, in_folder))


def _kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
        return "a device"
    return "neither a regular file nor a folder"


def _add_folder(folder: Path, name: str, top: Path, sources: list[tuple[str, Path, bool]]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as error:
        raise _errors.InvalidArgument(f"Cannot list the input folder {str(folder)!r}: {error.strerror}.",
                                      code="file_unreadable") from None
    for entry in entries:
        entry_name = name + "/" + entry.name
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError as error:
            raise _errors.InvalidArgument(f"Cannot look at {entry.path!r}: {error.strerror}.",
                                          code="file_unreadable") from None
        if stat.S_ISREG(mode):
            _add(sources, entry_name, Path(entry.path), True)
        elif stat.S_ISDIR(mode):
            _add_folder(Path(entry.path), entry_name, top, sources)
        else:
            raise _invalid(f"The input folder {str(top)!r} holds {entry.path!r}, {_kind_of(mode)}; only regular "
                           "files and folders are sent and links inside a folder are not followed: remove it, or "
                           "name what it points to on its own.")


def _folder_name(path: Path) -> str:
    normal = os.path.normpath(str(path))
    name = os.path.basename(normal)
    if name in ("", ".", ".."):
        name = os.path.basename(os.path.realpath(path))
    if not name:
        raise _invalid(f"The input {str(path)!r} is the root folder, which has no name; name the folders in it.")
    return name


def _read_capped(path: Path, cap: int, follow: bool) -> bytes:
    flags = os.O_RDONLY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise _errors.InvalidArgument(f"The input {str(path)!r} does not exist.", code="file_missing") from None
    except OSError as error:
        raise _errors.InvalidArgument(f"Cannot read the input {str(path)!r}: {error.strerror}.",
                                      code="file_unreadable") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _invalid(f"The input {str(path)!r} is not a regular file.")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, cap - total + 1))
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > cap:
                raise _invalid(f"The input files hold more than {MAX_INPUT_BYTES} bytes in all, the most a run "
                               f"takes; reading stopped at {str(path)!r}.")
            chunks.append(chunk)
    except OSError as error:
        raise _errors.InvalidArgument(f"Cannot read the input {str(path)!r}: {error.strerror}.",
                                      code="file_unreadable") from None
    finally:
        os.close(fd)


def collect_input_files(files: InputFiles) -> list[tuple[str, bytes]]:
    """The inputs to send, as (name, bytes), checked with the CLI's rules; raises before sending."""
    if isinstance(files, Mapping):
        named: list[tuple[str, bytes]] = []
        for name, content in files.items():
            if not isinstance(name, str):
                raise _errors.InvalidArgument("Input file names must be text.", code="input_files_invalid")
            if isinstance(content, str):
                content = content.encode("utf-8")
            if not isinstance(content, (bytes, bytearray, memoryview)):
                raise _errors.InvalidArgument(f"input {_shown(name)}: its content must be bytes or text.",
                                              code="input_files_invalid")
            named.append((name, bytes(content)))
        check_input_names([name for name, _ in named], [len(content) for _, content in named])
        return named
    if isinstance(files, (str, bytes, os.PathLike)):
        raise _errors.InvalidArgument("files takes a list of paths or a {name: bytes} mapping, not one path.",
                                      code="input_files_invalid")
    sources: list[tuple[str, Path, bool]] = []
    for item in files:
        path = Path(item)
        try:
            mode = os.stat(path).st_mode  # follows a link: the caller named it
        except FileNotFoundError:
            raise _errors.InvalidArgument(f"The input {str(path)!r} does not exist.", code="file_missing") from None
        except OSError as error:
            raise _errors.InvalidArgument(f"Cannot look at the input {str(path)!r}: {error.strerror}.",
                                          code="file_unreadable") from None
        if stat.S_ISREG(mode):
            _add(sources, path.name, path, False)
        elif stat.S_ISDIR(mode):
            first = len(sources)
            _add_folder(path, _folder_name(path), path, sources)
            sources[first:] = sorted(sources[first:], key=lambda source: source[0])
        else:
            raise _invalid(f"The input {str(path)!r} is {_kind_of(mode)}; name a regular file or a folder.")
    check_input_names([name for name, _, _ in sources])
    out: list[tuple[str, bytes]] = []
    total = 0
    for name, path, in_folder in sources:
        content = _read_capped(path, MAX_INPUT_BYTES - total, not in_folder)
        total += len(content)
        out.append((name, content))
    return out


class Outcome(str, Enum):
    WRITTEN = "written"
    KEPT_EXISTING = "kept_existing"
    FAILED = "failed"
    NOT_WRITTEN = "not_written"  # no out_dir: the bytes are only in memory


@dataclass(frozen=True)
class OutputFile:
    """One file the program left in the box's output folder."""

    name: str  # as the box named it: untrusted
    data: bytes
    outcome: Outcome
    path: Path | None  # where it was written (or kept), when out_dir was given
    reason: str = ""  # FAILED: one sentence


def check_output_folder(directory: StrPath) -> None:
    """The folder exists, is a folder and can be written (a fresh file made and removed)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _errors.InvalidArgument(f"The output folder {str(directory)} does not exist; make it first.",
                                      code="output_folder_invalid") from None
    except OSError as error:
        raise _errors.InvalidArgument(f"The output folder cannot be used: {str(directory)}: {error.strerror}.",
                                      code="output_folder_invalid") from None
    try:
        probe = _write_new_file(fd, b"")
        os.unlink(probe, dir_fd=fd)
    except OSError as error:
        raise _errors.InvalidArgument(f"The output folder cannot be written to: {str(directory)}: {error.strerror}.",
                                      code="output_folder_invalid") from None
    finally:
        os.close(fd)


def _write_new_file(dir_fd: int, data: bytes) -> str:
    for _ in range(16):
        name = _TEMPORARY_PREFIX + secrets.token_hex(8) + _TEMPORARY_SUFFIX
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=dir_fd)
        except FileExistsError:
            continue
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError:
            os.close(fd)
            os.unlink(name, dir_fd=dir_fd)
            raise
        os.close(fd)
        return name
    raise OSError(errno.EEXIST, "no fresh temporary name")


def _write_one(top_fd: int, directory: Path, name: str, data: bytes, force: bool) -> OutputFile:
    target = directory / name
    def failed(reason: str) -> OutputFile:
        return OutputFile(name, data, Outcome.FAILED, target, reason)
    if problem := file_name_problem(name):
        return failed(problem)
    parts = name.split("/")
    opened: list[int] = []
    try:
        fd = top_fd
        for part in parts[:-1]:
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as error:
                return failed(f"Cannot make the folder {part!r}: {error.strerror}.")
            try:
                fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as error:
                return failed(f"The folder {part!r} on its way is a link or not a folder ({error.strerror}).")
            opened.append(fd)
        leaf = parts[-1]
        try:
            mode: int | None = os.lstat(leaf, dir_fd=fd).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as error:
            return failed(f"Cannot look at it: {error.strerror}.")
        if mode is not None:
            if stat.S_ISDIR(mode):
                return failed("A folder of that name is there; PyBox never replaces a folder.")
            if stat.S_ISLNK(mode):
                return failed("A symbolic link of that name is there; PyBox never follows or replaces a link.")
            if not stat.S_ISREG(mode):
                return failed("Something other than a regular file has that name; PyBox replaces only regular files.")
            if not force:
                return OutputFile(name, data, Outcome.KEPT_EXISTING, target)
        try:
            temporary = _write_new_file(fd, data)
        except OSError as error:
            return failed(f"Cannot write it: {error.strerror}.")
        try:
            if force:
                os.rename(temporary, leaf, src_dir_fd=fd, dst_dir_fd=fd)
            else:  # never replaces a name taken meanwhile
                try:
                    os.link(temporary, leaf, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                except FileExistsError:
                    return OutputFile(name, data, Outcome.KEPT_EXISTING, target)
                finally:
                    os.unlink(temporary, dir_fd=fd)
        except OSError as error:
            try:
                os.unlink(temporary, dir_fd=fd)
            except OSError:
                pass
            return failed(f"Cannot write it: {error.strerror}.")
        return OutputFile(name, data, Outcome.WRITTEN, target)
    finally:
        for opened_fd in opened:
            os.close(opened_fd)


def write_output_files(directory: StrPath, outputs: list[tuple[str, bytes]], force: bool) -> list[OutputFile]:
    """Writes each output to directory/name as `pybox exec --out` does; one OutputFile each."""
    path = Path(directory)
    try:
        top_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        return [OutputFile(name, data, Outcome.FAILED, path / name, f"Cannot open {path}: {error.strerror}.")
                for name, data in outputs]
    try:
        return [_write_one(top_fd, path, name, data, force) for name, data in outputs]
    finally:
        os.close(top_fd)
