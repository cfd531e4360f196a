"""Logging to stderr, set up the same way by the command line, training and the benchmark (stdout stays for data),
and the run's stage times, logged as each stage ends."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

# Libraries whose INFO lines (each HTTP request, each model load) drown the run's own; shown only with --debug.
NOISY = ("sentence_transformers", "transformers", "httpx", "urllib3", "bm25s")


class AboveBars(logging.StreamHandler):
    """Each record on a line of its own above the progress bars (`tqdm.write`), not run into a bar's line
    ("BM25 index: 0doc [00:00]08:33:20 WARNING ...")."""

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm  # here, not at import: tqdm reads TQDM_DISABLE (--quiet) when first imported

        try:
            tqdm.write(self.format(record), file=self.stream)
        except Exception:
            self.handleError(record)


def log_to_stderr(level: int = logging.INFO, debug: bool = False) -> None:
    """Send log records of `level` and above to stderr, the noisy libraries' from WARNING (DEBUG with `debug`)."""
    logging.basicConfig(level=logging.DEBUG if debug else level, handlers=[AboveBars(sys.stderr)],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S", force=True)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(logging.DEBUG if debug else logging.WARNING)


class StageTimer:
    """Seconds per stage of a run, summed where a stage runs more than once, each logged as it ends (as the run's,
    `app.pipeline`)."""

    log = logging.getLogger("app.pipeline")

    def __init__(self):
        self.stages: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - start
        self.log.info("%s: %.1f s", name, self.stages[name])
