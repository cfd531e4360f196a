"""Output files written whole or not at all (the run, its ir_metadata, a report) and taken back by a stopped run,
the output and temporary directories checked before any work, and the one mapping of OS errors to the words a user
reads."""

from __future__ import annotations

import errno
import fcntl
import gzip
import logging
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
import time
import uuid
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, BinaryIO, TextIO

from .errors import ToucheError

log = logging.getLogger(__name__)

# The identity of each output this process has put in place (atomic_file), by absolute path.
_PLACED: dict[str, tuple[int, int, int] | None] = {}
# The outputs a run replaced or removed, each kept under a hidden name beside it (`_hold_previous`) until the run
# ends (`outputs_kept`), by absolute path; and the output directories of the runs under way.
_HELD: dict[str, Path] = {}
_KEPT_PREFIX = ".touche-previous."
_KEEPING: set[str] = set()
# A descriptor holding the lock on each kept copy (by its path) while its run goes on: the next run removes the
# copies no run holds (`remove_abandoned_temporaries`), a killed run's, at once rather than an hour later.
_HOLDING: dict[str, int] = {}

TEMPORARY_SUFFIX = ".tmp"
_PROBE_PREFIX = ".touche-probe."
# What the output's probe writes: an empty file is made on a full disk too (an inode, no block), and the run then
# failed at its write, after the work; a run.txt is tens of kB at least (the demo's 16 kB), TIRA's megabytes.
PROBE_BYTES = 64 << 10
# A probe lives for a fraction of a millisecond; one older than this was left by a run killed within it (SIGKILL),
# and TIRA uploads what the output directory holds: the next run's check removes it.
PROBE_STALE_S = 60.0
# Linux's inode flags (`chattr +i`, `chattr +a`; FS_IOC_GETFLAGS): no write lets a file so flagged be replaced, nor a
# file be renamed or removed in a directory so flagged, not even root's; the write of the run renames its temporary
# file onto run.txt.
_GET_FLAGS = 0x80086601
_LOCKS = ((0x10, "immutable (chattr +i)"), (0x20, "append-only (chattr +a)"))
# What a user can act on, by errno; anything else reads as the system's own words (strerror).
_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EISDIR: "is a directory",
    errno.ENOENT: "no such file or directory",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
    errno.ELOOP: "a symbolic link loop",
}


def os_reason(error: OSError) -> str:
    """Why an OS call failed, in a few words (no path: the caller names the path it was working on)."""
    if error.errno is None and _SHORT_WRITE.fullmatch(str(error)):  # numpy's tofile, which names no errno
        return f"the file system took part of a write ({error}): a full disk, or a file size limit"
    return _REASONS.get(error.errno) or (error.strerror or str(error) or type(error).__name__).lower()


_SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")


def describe_os_error(error: OSError) -> str:
    """An OSError nobody caught closer to it, as one line naming the file it concerns when it knows one."""
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{os_reason(error)}"


UTF32_MARKS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")  # UTF-32's byte order marks: the first opens as UTF-16's


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte order mark at the start of `data` names (it decodes the mark away), else None."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else None


def decoded(data: bytes) -> str:
    """A small text file's bytes as text: UTF-16 where a byte order mark says so (a Windows editor's "Unicode"),
    else UTF-8, a BOM skipped; a UnicodeDecodeError otherwise."""
    return data.decode(bom_encoding(data) or "utf-8")


def open_packed(path: Path, mode: str = "rb", **text) -> IO:
    """A file opened through gzip where its name ends in .gz (as TIRA, trec_eval and ir-measures tell a packed run or
    qrels file), as itself otherwise; text mode takes `encoding` and `newline` as `open` does."""
    return gzip.open(path, mode, **text) if Path(path).suffix == ".gz" else open(path, mode, **text)


def not_utf8(error: UnicodeDecodeError, path: Path) -> str:
    """Why a text file that must be UTF-8 (a run, qrels; gzipped where its name ends in .gz) cannot be read, in words:
    UTF-16 or UTF-32 where the byte order mark opening it says so (PowerShell's ">", Notepad's "Unicode"), not
    Python's "can't decode byte 0xff in position 0" (a position in the decoder's chunk, not in the file)."""
    try:
        with open_packed(path) as stream:
            start = stream.read(4)
    except (OSError, EOFError, zlib.error):
        start = b""
    utf32 = start in UTF32_MARKS
    if utf32 or bom_encoding(start) == "utf-16":
        return f"UTF-{32 if utf32 else 16} text (its byte order mark says so), not UTF-8: save it as UTF-8"
    if start.startswith(b"\x1f\x8b"):
        return "gzip data under a name without .gz: unpack it, or name it .gz"
    return f"not UTF-8 text (a byte {error.object[error.start]:#04x} that UTF-8 does not hold there)"


def small_file(path: Path, most: int = 1 << 20) -> bytes:
    """A small cache file's bytes (a `complete` mark, a cached page text); a FIFO, a device or a file of over `most`
    bytes is damage, a ValueError: one linked to /dev/zero was read until the memory ran out, a FIFO waited for
    ever."""
    if not path.is_file():
        raise ValueError(f"{path.name} is no regular file")
    with path.open("rb") as stream:
        data = stream.read(most + 1)
    if len(data) > most:
        raise ValueError(f"{path.name} is over {most} bytes")
    return data


def not_a_file(path: Path) -> str | None:
    """What an input path that should be a file is instead, in words; None for a file or for nothing there."""
    if path.is_symlink() and not path.exists():
        return f"a link to {os.readlink(path)}, which leads nowhere"
    if path.is_dir():
        return "a directory, not a file"
    if path.exists() and not path.is_file():
        return "not a regular file (a pipe or a device)"
    return None


def given_file(choice: Path, input_dir: Path, option: str) -> Path:
    """The file an option names (--corpus, --topics): `choice` itself where something is there (a link too) or where
    it is absolute, else that name in the input directory; one line saying why where that is no file."""
    here = os.path.lexists(choice) or choice.is_absolute()
    path = choice if here else input_dir / choice
    if not (here or os.path.lexists(path)):
        raise ToucheError(f"{option} {choice}: no such file, here or in {input_dir}")
    if problem := not_a_file(path):
        raise ToucheError(f"{option} {choice}: {problem}")
    if not path.is_file():
        raise ToucheError(f"{option} {choice}: no such file")
    return path


def mount_point(path: Path) -> bool:
    """Whether something is mounted at `path` (`docker run -v DIR:/out`). /proc/self/mountinfo lists bind mounts
    within one file system too, which os.path.ismount (a device change) misses; without procfs, that is the test."""
    where = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as lines:
            # The mount point is the 5th field, with space, tab, newline and backslash as octal escapes.
            points = (fields[4] for fields in map(str.split, lines) if len(fields) > 4)
            return any(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), point) == where for point in points)
    except OSError:
        return os.path.ismount(where)


def make_directory(directory: Path) -> list[Path]:
    """mkdir -p, where a file or a dangling link in the way is named as the reason (mkdir says "file exists"); the
    directories it makes get mode 0755 (with umask 077 the run's 0644 files were out of other users' reach; with
    umask 777 the run could not write into the directory it had just made).
    Returns the directories it made, deepest first: those a failed run may remove again (`remove_empty`), made one
    level at a time, so that "new/../old" made "new" only and a directory another process made in between is not
    counted."""
    made = []
    try:
        try:
            for path in reversed((directory, *directory.parents)):
                try:
                    path.mkdir()
                    made.append(path)
                    path.chmod(0o755)  # as the files in it are 0644, whatever the umask: TIRA reads as another user
                except OSError:  # there (EEXIST; or EACCES, EROFS for a directory there already, as mkdir -p does)
                    if not path.is_dir():
                        raise
        except (FileExistsError, NotADirectoryError):
            for path in (directory, *directory.parents):
                if path.is_symlink() and not path.exists():
                    raise ToucheError(f"cannot make {directory}: {path} is a link to {os.readlink(path)}, which "
                                      "leads nowhere") from None
                if path.exists() and not path.is_dir():
                    raise ToucheError(f"cannot make {directory}: {path} is a file, not a directory") from None
            raise
    except BaseException:  # after the reason is found: "new/../afile" needs "new" to say that afile is a file
        remove_empty(made[::-1])
        raise
    return made[::-1]


def unwritable_folder(directory: Path) -> Path | None:
    """The folder a write into `directory` goes to (it, else the nearest of its parents there, where it would be
    made) where this user cannot write into it (a read-only mount, another user's); None where they can."""
    there = _nearest_existing(directory)
    return there if there is not None and there.is_dir() and not os.access(there, os.W_OK | os.X_OK) else None


def _nearest_existing(directory: Path) -> Path | None:
    """`directory`, else the nearest of its parents that exists: where a write into it goes, or would make it."""
    return next((folder for folder in (directory, *directory.parents) if folder.exists()), None)


def free_space(directory: Path) -> int | None:
    """The bytes this user may still write where `directory` is (it, else the nearest of its parents there); None
    where that cannot be told."""
    try:
        there = _nearest_existing(directory)
        stats = os.statvfs(there) if there is not None else None
    except OSError:
        return None
    if stats is None:
        return None
    return (stats.f_bfree if os.geteuid() == 0 else stats.f_bavail) * stats.f_frsize  # root writes the reserve


def remove_empty(directories: list[Path]) -> None:
    """Remove `directories` (deepest first) where nothing is in them: what a failed run made for its output."""
    for path in directories:
        try:
            path.rmdir()
        except OSError:  # not empty, or gone
            return


def locked(path: Path) -> str | None:
    """Whether the file or directory at `path` (a link: the link itself, which is what a rename replaces) is
    immutable or append-only, in words; None where it is neither or its file system keeps no such flags."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        flags = fcntl.ioctl(descriptor, _GET_FLAGS, bytes(8))
    except OSError:  # ENOTTY, EINVAL: a file system without the flags (tmpfs of old kernels, some network mounts)
        return None
    finally:
        os.close(descriptor)
    return next((words for bit, words in _LOCKS if int.from_bytes(flags[:4], "little") & bit), None)


def _remove_stale_probes(directory: Path) -> None:
    """Remove the probe files of killed runs (`PROBE_STALE_S`); one another run is writing now stays."""
    for path in directory.glob(_PROBE_PREFIX + "*"):
        with suppress(OSError):
            status = path.lstat()
            if stat.S_ISREG(status.st_mode) and time.time() - status.st_mtime > PROBE_STALE_S:
                path.unlink()


def prepare_output(directory: Path, outputs: Iterable[str], overwrite: bool, flag: str = "-o/--output",
                   probe_bytes: int = PROBE_BYTES) -> list[Path]:
    """Before any work: `directory` exists (created if missing) and is a directory, accepts a probe file, and holds
    none of `outputs` unless `overwrite`, and then none that cannot be replaced. A run that cannot be written fails
    here, not after the hour it took (and leaves no directory it made). `flag` is the option that names the
    directory. The probe holds `probe_bytes` (a full disk takes an empty file); the writes themselves pass 0, their
    own write saying a full disk (a run.txt that fits into what is left must not be refused for the probe's size).
    Returns the directories it made (`make_directory`)."""
    made = []
    try:
        if directory.exists() and not directory.is_dir():
            raise ToucheError(f"output path {directory} is a file, not a directory: pass a directory to {flag}")
        # A probe file could not be removed again from a locked directory.
        if directory.is_dir() and (lock := locked(Path(os.path.realpath(directory)))):
            raise ToucheError(f"cannot write to output directory {directory}: it is {lock}, so a run cannot be put "
                              "in place there")
        made = make_directory(directory)
        _remove_stale_probes(directory)
        handle, probe = tempfile.mkstemp(prefix=_PROBE_PREFIX, dir=directory)
        try:  # tmpfs and ext4 take the blocks at write(): ENOSPC, EDQUOT and EFBIG (`ulimit -f`) come here
            # Not zeros: a compressing file system (btrfs, ZFS) stores zeros as a hole and takes no block.
            data = memoryview(os.urandom(probe_bytes))  # at the write itself: 0, the write says it
            while data:  # a short write takes what was left; the next one says why (ENOSPC, EFBIG, EDQUOT)
                if not (written := os.write(handle, data)):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                data = data[written:]
        finally:
            try:
                os.close(handle)  # NFS reports a full disk at close
            finally:
                os.unlink(probe)
    except OSError as error:
        remove_empty(made)
        raise ToucheError(f"cannot write to output directory {directory}: {os_reason(error)}") from None
    for name in outputs:
        if (directory / name).is_dir():  # --overwrite cannot replace it either
            raise ToucheError(f"{directory / name} is a directory, not a file: remove it or choose another output")
        if ((directory / name).exists() or (directory / name).is_symlink()) and not overwrite:  # a link too
            dangling = "" if (directory / name).exists() else f" ({not_a_file(directory / name)})"
            raise ToucheError(f"{directory / name} exists{dangling}; pass --overwrite to replace it")
        if (directory / name).exists() and (lock := locked(directory / name)):
            raise ToucheError(f"{directory / name} is {lock}: --overwrite cannot replace it")
        if overwrite and (owner := _sticky_owner(directory, name)) is not None:
            raise ToucheError(f"{directory / name} belongs to another user ({owner}) in a sticky directory (as /tmp "
                              "is), where only a file's owner may replace it: --overwrite cannot replace it")
    return made


def _sticky_owner(directory: Path, name: str) -> str | None:
    """The owner of an output this user may not replace, in words, where the directory is sticky (mode 1777, as
    /tmp is) and neither it nor the output is this user's (root may): the rename onto it failed after the work,
    "operation not permitted"; else None."""
    try:
        found, holder = (directory / name).lstat(), directory.stat()
    except OSError:
        return None
    user = os.geteuid()
    if user == 0 or not holder.st_mode & stat.S_ISVTX or user in (found.st_uid, holder.st_uid):
        return None
    try:
        import pwd

        return pwd.getpwuid(found.st_uid).pw_name
    except (KeyError, ImportError):
        return f"uid {found.st_uid}"


@contextmanager
def atomic_file(path: Path, prefix: str | None = None, binary: bool = False,
                output: bool = False, overwrite: bool = True) -> Iterator[TextIO | BinaryIO]:
    """A UTF-8 text file (or a `binary` one) written beside `path` (named `prefix...TEMPORARY_SUFFIX`, by default
    `.NAME.`: hidden, and told apart from the temporaries of the files beside it) and renamed
    onto it when the block ends without error, so readers see the whole file or none; on error (a full disk,
    Ctrl-C) the temporary file is removed. An `output` (run.txt, ir-metadata.yml) is remembered as this process's
    (`placed_here`), so that a stopped run can take back what it put in place and nothing else, and the temporaries
    of its name that a killed run left beside it go first (`remove_abandoned_temporaries`: not a running one's).

    The file gets mode 0644: mkstemp's 0600 would hide it from whoever reads it next (the user TIRA evaluates as).
    Not `overwrite`: a file another process put at `path` meanwhile stays, and the block raises FileExistsError.
    """
    prefix = f".{path.name}." if prefix is None else prefix
    if output:
        remove_abandoned_temporaries(path.parent, prefix)
    handle, temporary, lock = _locked_temporary(path, prefix)
    try:
        with os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
        os.chmod(temporary, 0o644)
        if output:  # before the rename: a stop right after it still finds the file remembered
            _PLACED[os.path.abspath(path)] = identity(Path(temporary))
            _hold_previous(path)
        if overwrite:
            os.replace(temporary, path)
        else:
            _place_new(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        os.close(lock)


def _place_new(temporary: str, path: Path) -> None:
    """Put `temporary` at `path` where nothing is there: a hard link fails where the name is taken, as a rename
    would not (two runs into one output directory both passed the check before their work, and the later one's
    run.txt replaced the other's with exit 0). A file system without hard links renames, as before."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (EPERM, ENOTSUP): the rename, without the check
        os.replace(temporary, path)
        return
    os.unlink(temporary)


def _locked_temporary(path: Path, prefix: str) -> tuple[int, str, int]:
    """A new temporary file beside `path`: its descriptor, name and a second descriptor holding its lock until the
    rename (another run removes only temporaries it can lock: `remove_abandoned_temporaries`). One swept away between
    its making and its locking is made again; a file system without locks (ENOLCK) still takes the file."""
    while True:
        handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=TEMPORARY_SUFFIX, dir=path.parent)
        try:
            lock = os.dup(handle)
        except OSError:
            os.close(handle)
            raise
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # a sweeper holds it for an instant at most
        except OSError:
            return handle, temporary, lock
        try:
            if os.fstat(lock).st_ino == os.lstat(temporary).st_ino:
                return handle, temporary, lock
        except FileNotFoundError:
            pass
        os.close(lock)
        os.close(handle)


def remove_abandoned_temporaries(directory: Path, prefix: str, by_change: bool = False) -> None:
    """Remove `atomic_file`'s temporaries of `prefix` in `directory` that no process is writing (their lock free): a
    run killed while writing leaves its own; one writing into the same directory now keeps its. Where the lock
    cannot tell (a file this user cannot open, a file system without locks), one no write has touched for
    STALE_AFTER_S goes (`by_change`: one not changed, linked included, for as long: a kept old output's
    modification time is the old run's). A directory of that name is no temporary and stays (it failed the run
    after its work: "is a directory")."""
    for path in directory.glob(prefix + "*" + TEMPORARY_SUFFIX):
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            continue
        except OSError:  # a link, another user's file: by its age
            _remove_if_stale(path, by_change)
            continue
        try:
            if stat.S_ISDIR(os.fstat(descriptor).st_mode):
                continue
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # held: being written
            continue
        except OSError:  # no locks here
            _remove_if_stale(path, by_change)
        else:
            with suppress(OSError):  # another user's in a sticky directory (as /tmp): theirs to remove
                path.unlink(missing_ok=True)
        finally:
            os.close(descriptor)


def _remove_if_stale(path: Path, by_change: bool) -> None:
    with suppress(FileNotFoundError):
        found = path.lstat()
        touched = found.st_ctime if by_change else found.st_mtime
        if not stat.S_ISDIR(found.st_mode) and time.time() - touched > STALE_AFTER_S:
            with suppress(OSError):
                path.unlink(missing_ok=True)


# How long a temporary file (`atomic_file`'s) may go unwritten before it counts as a killed process's: a write in
# progress touches its file all the time, and another run sharing a cache may be writing one.
STALE_AFTER_S = 3600


def remove_stale_temporaries(directory: Path) -> None:
    """Remove the temporary files and directories in `directory` that no write has touched for STALE_AFTER_S: a
    process killed while writing (SIGKILL, the OOM killer, a power cut) leaves them there for good."""
    try:
        for path in directory.glob(f".*{TEMPORARY_SUFFIX}"):
            if time.time() - path.lstat().st_mtime <= STALE_AFTER_S:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
    except OSError:  # a cache that cannot be read or changed: the entry's own checks say so
        pass


OWNER_FILE = ".touche-owner"


@contextmanager
def run_scratch(prefix: str) -> Iterator[Path]:
    """A temporary directory for this run, removed after it (also on Ctrl-C and SIGTERM; a cleanup error is no
    error), holding an OWNER_FILE the run keeps locked (flock) while it lives. A run killed outright (SIGKILL, the
    OOM killer) cannot remove its own: each new one first removes those of `prefix` whose lock it can take (a killed
    run on a large corpus left its index, gigabytes, for good). A lock, not a process id: ids mean nothing across
    PID namespaces (a container sharing /tmp with the host), and in a container touche is often process 1."""
    _remove_abandoned(prefix)
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as name:
        owner = _lock_owner(Path(name))
        try:
            yield Path(name)
        finally:
            if owner is not None:
                os.close(owner)


def _lock_owner(directory: Path) -> int | None:
    """The OWNER_FILE of `directory`, locked: made under another name and renamed once locked, so that no sweeping
    run ever finds it unlocked. None where it cannot be made (a full disk: the directory is then never swept)."""
    staging = directory / f"{OWNER_FILE}.{os.getpid()}"
    try:
        descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        os.replace(staging, directory / OWNER_FILE)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def _remove_abandoned(prefix: str) -> None:
    """Remove this user's directories of `prefix` (`run_scratch`) whose OWNER_FILE is a regular file no run holds
    locked; anything else (another user's, a link, a FIFO, none) is left alone."""
    try:
        found = list(Path(tempfile.gettempdir()).glob(f"{prefix}*"))
    except OSError:
        return
    for path in found:
        try:
            if path.is_symlink() or not path.is_dir() or path.lstat().st_uid != os.getuid():
                continue
            descriptor = os.open(path / OWNER_FILE, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:  # none: being made, or made before owners were
            continue
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                continue
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: its run lives
        except OSError:
            continue
        finally:
            os.close(descriptor)
        shutil.rmtree(path, ignore_errors=True)


def check_temporary_directory() -> None:
    """Before any work: Python, torch and the run's caches need a temporary directory they can write."""
    try:
        tempfile.gettempdir()
    except FileNotFoundError:  # what tempfile raises when none of its candidates takes a file
        raise ToucheError("no writable temporary directory ($TMPDIR, /tmp, /var/tmp, /usr/tmp and the working "
                          "directory were tried): set TMPDIR to one") from None


def identity(path: Path) -> tuple[int, int, int] | None:
    """Which file is at `path` now (device, inode, modification time), None for none: a replaced file differs."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_dev, status.st_ino, status.st_mtime_ns


def placed_here(path: Path) -> bool:
    """Whether the file at `path` is the output this process last put there (`atomic_file(output=True)`)."""
    now = identity(path)
    return now is not None and now == _PLACED.get(os.path.abspath(path))


def _hold_previous(path: Path) -> None:
    """Keep the file at `path` (or the link: as a link), an output about to be replaced or removed within
    `outputs_kept`, under a hidden name of its own beside it (a second link to it) until the run ends. Elsewhere, or
    on a file system without links, nothing is kept: the old file goes, as it did before."""
    if os.path.abspath(path.parent) not in _KEEPING or not (path.is_file() or path.is_symlink()):
        return
    held = path.with_name(f"{_KEPT_PREFIX}{uuid.uuid4().hex}.{path.name}{TEMPORARY_SUFFIX}")  # other runs' differ
    # Locked before it is linked, the copy is born locked (a lock is the file's, whatever its name): another run's
    # start cannot take it for a killed run's in between.
    descriptor = _lock(path)
    try:
        os.link(path, held, follow_symlinks=False)
    except OSError:
        if descriptor is not None:
            os.close(descriptor)
        return
    if descriptor is not None:
        if _same_file(descriptor, held):
            _HOLDING[str(held)] = descriptor
        else:  # replaced between its locking and its linking: kept unlocked, it goes by its age
            os.close(descriptor)
    _HELD[os.path.abspath(path)] = held


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        return os.fstat(descriptor).st_ino == os.lstat(path).st_ino
    except OSError:
        return False


def _lock(path: Path) -> int | None:
    """A descriptor holding the lock on the file at `path` for as long as its run keeps it (`_HOLDING`), so that
    the next run's start removes a copy only once that run is gone; None for a link, a file this user cannot read,
    or one on a file system without locks: such a copy goes by its age (STALE_AFTER_S)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def _let_go(held: Path, remove: bool = True) -> None:
    """Remove a kept copy (`_hold_previous`) and release its lock; with `remove` False, release it only: the copy
    stays for the next run's start to remove."""
    if remove:
        held.unlink(missing_ok=True)
    descriptor = _HOLDING.pop(str(held), None)
    if descriptor is not None:
        os.close(descriptor)


def discard_output(path: Path) -> None:
    """Remove an old output that would describe another run (`--overwrite`), kept as `_hold_previous` keeps it."""
    _hold_previous(path)
    path.unlink(missing_ok=True)


@contextmanager
def outputs_kept(output_dir: Path, names: Iterable[str]) -> Iterator[None]:
    """A run writing its outputs (`names`) into `output_dir`: the old ones it replaces or removes are kept
    (`_hold_previous`) until it ends. A run that is stopped or fails takes back what it put in place and puts them
    back, so the old run stays whole (a stop just after run.txt was placed lost it); one that finishes lets them go."""
    before = {name: identity(output_dir / name) for name in names}
    key, ended = os.path.abspath(output_dir), False  # ended: finished, or taken back to the end
    with suppress(OSError):  # an output directory not made yet, or unreadable: its own check says so
        remove_abandoned_temporaries(output_dir, _KEPT_PREFIX, by_change=True)  # a killed run's, not a running one's
    try:
        _KEEPING.add(key)
        yield
        ended = True
    except BaseException:
        with _unstoppable():  # a second stop in the middle lost both runs
            _withdraw(output_dir, before)
        ended = True
        raise
    finally:
        _KEEPING.discard(key)
        for path in [path for path in _HELD if os.path.dirname(path) == key]:
            # Not ended: a stop cut the putting back short, and the copies stay until the next run, not lost.
            _let_go(_HELD.pop(path), remove=ended)


@contextmanager
def _unstoppable() -> Iterator[None]:
    """Stops (Ctrl-C, SIGTERM, SIGHUP) are ignored within, where this is the main thread (only it sets handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    try:
        for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[stop] = signal.signal(stop, signal.SIG_IGN)
        yield
    finally:
        for stop, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be set again
                signal.signal(stop, handler)


def _withdraw(output_dir: Path, before: dict[str, tuple[int, int, int] | None]) -> None:
    """Take back what a stopped or failed run put into `output_dir` (`before`: each output's `identity` at the run's
    start) and put back what it replaced or removed, where nothing else took the name meanwhile (another run's
    file stays). Where one of them was not kept, the old ones still there go too: they describe a run that is gone.
    A run that put nothing in place changes nothing."""
    ours = [name for name in before if placed_here(output_dir / name)]
    if not ours:
        return
    kept = {name: _HELD.pop(os.path.abspath(output_dir / name), None) for name in before}
    whole = all(kept[name] is not None or was is None or identity(output_dir / name) == was
                for name, was in before.items())
    old = [] if whole else [name for name, was in before.items()
                            if was is not None and identity(output_dir / name) == was]
    for name in ours + old:
        try:
            (output_dir / name).unlink(missing_ok=True)
        except OSError as error:
            log.warning("a stopped run cannot remove %s: %s", output_dir / name, os_reason(error))
    for name, copy in kept.items():
        if copy is None:
            continue
        target = output_dir / name
        try:
            if whole:  # a link fails where the name is taken meanwhile: another run's file stays
                os.link(copy, target, follow_symlinks=False)
        except FileExistsError:
            pass
        except OSError as error:
            log.warning("a stopped run cannot put back %s: %s", target, os_reason(error))
            _let_go(copy, remove=False)
            continue
        _let_go(copy)
