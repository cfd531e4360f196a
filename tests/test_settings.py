"""A run's defaults are the ones the README documents: the command line takes them from `RunSettings`."""

import re
from pathlib import Path

import pytest
import typer

from app import cli
from app.settings import RunSettings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
RUN_OPTIONS = {param.name: param for param in typer.main.get_command(cli.app).commands["run"].params}


@pytest.mark.parametrize("field", ["candidates", "rerank_depth", "depth", "stance_depth"])
def test_the_numbers_a_run_defaults_to_are_the_readmes(field):
    """`--candidates 1000`, `--rerank-depth 100`, `--depth 1000`, `--stance-depth 100`: what TIRA runs unless told."""
    flag = "--" + field.replace("_", "-")
    documented = re.search(rf"`{flag} (\d+)`", README)
    assert documented is not None, f"the README documents no default of {flag}"
    assert getattr(RunSettings, field) == RUN_OPTIONS[field].default == int(documented[1])


@pytest.mark.parametrize("field, default", [("tag", "touche"), ("precision", "auto"), ("device", "auto"),
                                            ("page_text", "main"), ("stance_model", "cross"), ("backend", "auto")])
def test_the_choices_a_run_defaults_to_come_first_in_the_readme(field, default):
    """`--precision auto|fp32|bf16`: the README lists a choice's default first; `--tag touche`."""
    assert getattr(RunSettings, field) == RUN_OPTIONS[field].default == default
    assert re.search(rf"`--{field.replace('_', '-')} {default}(`|\\\|)", README)


@pytest.mark.parametrize("field, value", [("rerank_depth", 0), ("rerank_depth", -1), ("depth", 0), ("candidates", 1.5),
                                          ("stance_depth", -1), ("precision", "bf17"), ("device", "gpu"),
                                          ("stance_model", "crosss"), ("max_seq_length", True), ("depth", 1001)])
def test_settings_a_run_cannot_take_are_an_error_when_made(field, value):
    """A stage called alone took them: rerank_depth=0 was an IndexError deep in numpy after the work, -1 reranked all
    but the last candidate and "bf17" ran fp32, without a word (an attack on the Python API)."""
    with pytest.raises(ValueError, match=f"RunSettings: {field} must be"):
        RunSettings(input_dir=Path("in"), output_dir=Path("out"), **{field: value})


def test_settings_take_paths_as_strings_and_numpy_integers():
    import numpy as np

    settings = RunSettings(input_dir="in", output_dir="out", rerank_depth=np.int64(3))
    assert settings.input_dir == Path("in") and settings.rerank_depth == 3 and type(settings.rerank_depth) is int
