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
