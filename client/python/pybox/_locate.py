"""Which pyboxd to talk to, exactly as `pybox` finds it (common/paths.cpp,
client_daemon_socket): $PYBOX_HOME's socket when PYBOX_HOME is set; else the user's own daemon
(~/.pybox/runtime/pyboxd.sock) when that socket exists; else the system daemon's
($PYBOX_SYSTEM_SOCKET when set, else /run/pybox/pyboxd.sock) when it exists; else the user's own
(so that the error names it). And the public key `pybox verify` trusts by default."""

from __future__ import annotations

import os
from pathlib import Path

from . import _errors

SYSTEM_SOCKET = "/run/pybox/pyboxd.sock"
SYSTEM_RUNTIME = "/var/lib/pybox"


def _own_runtime() -> Path:
    home = os.environ.get("PYBOX_HOME", "")
    if home:
        if not os.path.isabs(home):
            raise _errors.DaemonUnavailable(f'PYBOX_HOME must be an absolute path (got "{home}").',
                                            code="invalid_runtime_dir")
        return Path(os.path.normpath(home))
    user_home = os.environ.get("HOME", "")
    if not user_home.startswith("/"):
        raise _errors.DaemonUnavailable("HOME is not set to an absolute path; set HOME or PYBOX_HOME.",
                                        code="invalid_runtime_dir")
    return Path(user_home) / ".pybox" / "runtime"


def _system_socket() -> Path:
    named = os.environ.get("PYBOX_SYSTEM_SOCKET", "")
    if not named:
        return Path(SYSTEM_SOCKET)
    if not os.path.isabs(named):
        raise _errors.DaemonUnavailable(f'PYBOX_SYSTEM_SOCKET must be an absolute path (got "{named}").',
                                        code="invalid_runtime_dir")
    return Path(os.path.normpath(named))


def daemon_socket() -> Path:
    named = bool(os.environ.get("PYBOX_HOME", ""))
    try:
        own: Path | None = _own_runtime() / "pyboxd.sock"
        own_error: _errors.DaemonUnavailable | None = None
    except _errors.DaemonUnavailable as error:
        own, own_error = None, error
    if named or (own is not None and own.exists()):
        if own is None:
            assert own_error is not None
            raise own_error
        return own
    try:
        system = _system_socket()
        if system.exists():
            return system
    except _errors.DaemonUnavailable:
        pass
    if own is None:
        assert own_error is not None
        raise own_error
    return own


def local_public_key_file() -> Path:
    """The key `pybox verify` trusts without --key (client/key.cpp, local_public_key)."""
    candidates = [_own_runtime() / "signing_key.pub.pem"]
    if not os.environ.get("PYBOX_HOME", ""):
        candidates.append(Path(SYSTEM_RUNTIME) / "signing_key.pub.pem")
    for file in candidates:
        if file.exists():
            return file
    looked = ", ".join(str(file) for file in candidates)
    raise _errors.PyBoxError(f"This machine has no PyBox public key (looked for {looked}; pyboxd makes its key "
                             "pair when it first starts). Give the signer's public key.", code="no_local_key")
