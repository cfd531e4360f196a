"""scripts/ back the README's figures: what they import from the package, also within a subcommand's function, must
exist (the import of a function moved to another module ended `page-stance` at its start, unseen by `--help`)."""

import ast
import importlib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _package_imports(path: Path):
    """(line, module, name) of each `from app... import name` in a file, wherever it stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "app":
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def _exists(module: str, name: str) -> bool:
    """Whether `from module import name` finds a name or a submodule."""
    if hasattr(importlib.import_module(module), name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError:
        return False
    return True


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda path: path.name)
def test_every_name_a_script_imports_from_the_package_exists(script):
    missing = [f"{script.name}:{line} {module}.{name}" for line, module, name in _package_imports(script)
               if not _exists(module, name)]
    assert not missing
