"""Shared fixtures. `tests/` is deliberately not a package (chatnoir-api installs a top-level `tests`)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

FIXTURES = Path(__file__).parent / "fixtures"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True, scope="session")
def no_user_cache():
    """The runs the tests start keep no cache across runs, as on CI, whatever the user's $XDG_CACHE_HOME (a read-only
    one added a warning to the stderr tests compare; a filled one hid a cold start, and took the tests' indexes)."""
    kept = os.environ.pop("XDG_CACHE_HOME", None)
    yield
    if kept is not None:
        os.environ["XDG_CACHE_HOME"] = kept


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def _absent(what: Path) -> None:
    """A test without its ../shared file skips, but fails on CI (`CI` set, as .ci/run sets it), which has
    ../shared beside the checkout: a skip there hides a regression."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):  # CI=false is no CI
        pytest.fail(f"{what} is absent on CI")
    pytest.skip(f"{what} is absent; the CI machine has it")


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        _absent(SHARED_DATA)
    return SHARED_DATA


@pytest.fixture
def require_shared():
    """A check that a file of ../shared exists (`_absent` where not)."""
    def require(path: Path) -> None:
        if not path.exists():
            _absent(path)
    return require


@pytest.fixture
def load_script():
    """A script of scripts/ (no package) imported as a module by its name."""
    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
