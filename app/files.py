"""Output files written whole or not at all: the run, its ir_metadata, a report."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

TEMPORARY_SUFFIX = ".tmp"


@contextmanager
def atomic_text(path: Path, prefix: str) -> Iterator[TextIO]:
    """A UTF-8 text file written beside `path` (named `prefix...TEMPORARY_SUFFIX`) and renamed onto it when the
    block ends without error, so readers see the whole file or none; on error the temporary file is removed.

    The file gets mode 0644: mkstemp's 0600 would hide it from whoever reads it next (the user TIRA evaluates as).
    """
    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=TEMPORARY_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
