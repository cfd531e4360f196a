import logging

import pytest

from app.logs import NOISY, log_to_stderr


@pytest.fixture(autouse=True)
def restored_logging():
    """The handlers set up here write to capsys's stream, which closes after the test."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in NOISY}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, noisy_level in levels.items():
        logging.getLogger(name).setLevel(noisy_level)


def test_records_go_to_stderr_and_the_noisy_libraries_are_quiet(capsys):
    log_to_stderr()
    logging.getLogger("app.test").info("stage done")
    logging.getLogger(NOISY[0]).info("loading weights")
    out, err = capsys.readouterr()
    assert out == ""
    assert "INFO app.test: stage done" in err
    assert "loading weights" not in err


def test_debug_shows_the_libraries_too(capsys):
    log_to_stderr(logging.WARNING, debug=True)
    logging.getLogger("urllib3").debug("GET /api/v1/_search")
    assert "GET /api/v1/_search" in capsys.readouterr().err


def test_a_record_logged_while_a_bar_is_drawn_gets_a_line_of_its_own(capsys):
    """It was written after the bar's text on the bar's line ("BM25 index: 0doc [00:00]08:33:20 WARNING ...")."""
    import sys

    from tqdm import tqdm

    log_to_stderr()
    with tqdm(total=3, desc="BM25 index", file=sys.stderr, disable=False) as bar:
        bar.update(1)
        logging.getLogger("app.test").warning("skipped 3 records")
    err = capsys.readouterr().err
    line = next(line for line in err.replace("\r", "\n").splitlines() if "skipped 3 records" in line)
    assert line.split(" WARNING ")[0].count(":") == 2 and "BM25 index" not in line, repr(err)
