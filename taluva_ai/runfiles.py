"""Files of run directories (tournaments, training runs): written atomically, their SHA-256
checksums recorded when they are written, and checked when they are read back.

A training run records the checksum of every file it writes in its ``state.json``
(docs/alphazero.md); a tournament records each game record's checksum in that game's line of
``results.jsonl``, and each line's own checksum in the line (docs/tournaments.md). A file
that is missing or whose bytes differ from its checksum is reported by name, with what to
do (:class:`taluva_ai.errors.RunFileError`), never used or skipped silently.

Run files and the files given to a run (``--config``, ``--deals``) are read only if they are
regular files, up to a size (:func:`read_regular`, :func:`open_regular`; issue 49): a FIFO
(opening it would wait for a writer), a device (a symbolic link to ``/dev/zero`` would fill
the memory) or a directory is refused in one line naming the file.

While a run lasts it holds its directory's lock (:func:`run_lock`: a second run on the same
directory fails at once) and SIGTERM stops it like Ctrl-C (:func:`sigterm_as_interrupt`), so
that it leaves the directory resumable. Tournaments (:mod:`taluva_ai.tournament.rundir`) and
training runs share these.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO, Any

from taluva_ai.errors import RunConfigError

try:  # POSIX; elsewhere tournaments run without the lock of their run directory
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

_CHUNK = 1 << 20

#: The most bytes :func:`read_regular` reads of a run file or an input file (a config, a deal
#: file, ``state.json``, ``metrics.jsonl``): larger is refused, before it fills the memory.
MAX_FILE_BYTES = 256 << 20

#: The most bytes of a config file (``taluva tournament --config``, ``taluva train --config``).
MAX_CONFIG_BYTES = 4 << 20


def sha256_bytes(data: bytes | str) -> str:
    """SHA-256 of ``data`` (a string as UTF-8), as 64 hex digits."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """SHA-256 of a file's bytes, as 64 hex digits.

    Raises:
        OSError: the file cannot be read.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def json_sha256(obj: Any) -> str:
    """SHA-256 of a JSON value in a canonical form (keys sorted, no spaces): the checksum a
    JSON object carries of its other fields."""
    return sha256_bytes(json.dumps(obj, sort_keys=True, separators=(",", ":")))


@contextlib.contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Inside the block, an :class:`OSError` that names no file (a failed ``write`` or
    ``fsync``: disk full, I/O error) or names the temporary ``.part`` file is raised again
    naming ``path``, the file being written."""
    try:
        yield
    except OSError as e:
        name = e.filename
        if name is None or str(name).endswith(".part") or ".part." in Path(str(name)).name:
            raise OSError(e.errno, e.strerror or str(e), str(path)) from e
        raise


def refuse_special(path: str | Path) -> None:
    """Refuse to write onto ``path`` when it exists and is not a regular file (a device such
    as ``/dev/null``, a FIFO, a directory): a write through a temporary file and a rename
    would replace it.

    Raises:
        IsADirectoryError, OSError: one line naming ``path`` and what it is."""
    try:
        st = os.stat(path)
    except OSError:
        return  # not there (or not reachable: the write itself will say)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(path))
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a special file")
        raise OSError(errno.EINVAL, f"is {kind}, not a regular file: give a file's path",
                      str(path))


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (``"a FIFO"``, ...)."""
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a file")


def open_regular(path: str | Path, what: str | None = None) -> IO[bytes]:
    """``path`` opened for reading in binary, if it is a regular file (a symbolic link is
    followed, and what it leads to is checked).

    The file is opened without blocking (``O_NONBLOCK``: opening a FIFO with no writer would
    wait for one) and checked (``fstat`` of the open file, so it cannot be swapped between the
    check and the read) before anything is read.

    Args:
        what: what the file should be, for the message (``"a record"``), or None.

    Raises:
        OSError: the file cannot be opened, or it is not a regular file (a FIFO, a device, a
            socket, a directory): ``errno.EINVAL``, its ``strerror`` says which in one line
            (``"not a regular file (a FIFO); a record is a file"``), its ``filename`` is
            ``path``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({_kind(mode)})"
                          + (f"; {what} is a file" if what else ""), str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | Path, what: str | None = None,
                 max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), at most ``max_bytes``
    of them: a FIFO, a device (a symbolic link to ``/dev/zero``), a directory or a larger
    file is refused before it is read whole.

    Raises:
        OSError: as :func:`open_regular`; ``errno.EFBIG`` for a file over ``max_bytes``
            (``"larger than N bytes, more than a config may have"``; ``what`` as in
            :func:`open_regular`), naming ``path``.
    """
    with open_regular(path, what) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes"
                      + (f", more than {what} may have" if what else ""), str(path))
    return data


def write_atomic(path: str | Path, data: bytes | str, exclusive: bool = False) -> str:
    """Write ``data`` (a string as UTF-8) to ``path`` through a temporary file in the same
    folder (``.<name>.part``), pushed to the disk (``fsync``) and renamed onto ``path``: the
    file is either the old one or the whole new one. Returns the SHA-256 of ``data``.

    With ``exclusive``, the temporary file is a new one of a random name
    (``.<name>.<8 hex>.part``, created with ``O_EXCL``): nothing already there, a symbolic
    link included, is followed or written.

    Raises:
        OSError: it cannot be written (naming ``path``; the temporary file is removed).
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    refuse_special(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part" if exclusive
                         else f".{path.name}.part")
    with naming(path):
        opened = False
        try:
            with open(tmp, "xb" if exclusive else "wb") as f:
                opened = True
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if opened or not exclusive:  # not a file that was there before (exclusive)
                tmp.unlink(missing_ok=True)
            raise
    return sha256_bytes(raw)


def check_file(path: str | Path, sha256: str,
               where: str = "recorded when it was written") -> str | None:
    """What is wrong with a file whose checksum was recorded as ``sha256``: None when it is
    there with those bytes, else ``"missing"``, ``"unreadable (...)"`` or ``"damaged (...)"``
    (:func:`damaged`; to be preceded by the file's name and followed by what to do)."""
    path = Path(path)
    if not path.is_file():
        return "missing" if not path.exists() else "unreadable (not a file)"
    try:
        got = sha256_file(path)
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    return None if got == sha256 else damaged(got, sha256, where)


def read_checked(path: str | Path, sha256: str | None) -> tuple[bytes | None, str | None]:
    """The bytes of a file whose checksum was recorded as ``sha256`` (None: not recorded), and
    what is wrong with it in :func:`check_file`'s words: ``(bytes, None)`` when it is there
    with those bytes, else ``(None, "missing" | "unreadable (...)" | "damaged (...)" | "not
    recorded in state.json")``."""
    path = Path(path)
    if not path.is_file():
        return None, "missing" if not path.exists() else "unreadable (not a file)"
    try:
        raw = path.read_bytes()
    except OSError as e:
        return None, f"unreadable ({e.strerror or e})"
    if sha256 is None:
        return None, "not recorded in state.json"
    got = sha256_bytes(raw)
    return (raw, None) if got == sha256 else (None, damaged(got, sha256))


def damaged(got: str, want: str, where: str = "recorded when it was written") -> str:
    """``"damaged (its SHA-256 is <got>..., not the <want>... <where>)"``."""
    return f"damaged (its SHA-256 is {got[:12]}..., not the {want[:12]}... {where})"


@contextlib.contextmanager
def run_lock(out: Path, holder: str = "tournament") -> Iterator[None]:
    """Hold an exclusive lock on ``out/.lock`` (``fcntl.flock``, non-blocking), for a run
    directory (a tournament's, or a training run's with ``holder="training run"``).

    Raises:
        RunConfigError: another run holds it.
    """
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunConfigError(
                f"{out} is in use by another {holder} (it holds {out / '.lock'}); wait for "
                "it to finish or use another --out") from None
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While a run (a tournament, a training run) lasts, SIGTERM raises KeyboardInterrupt in
    the main thread, so it stops the workers and leaves the run directory resumable like
    Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
