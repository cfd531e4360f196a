"""Retraining outside this team: each training module's DATA_FILES drives the missing-file check and docs/DATA.md."""

from importlib import import_module
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import TRAINED_MODELS, app
from app.training.common import require_data

DATA_DOC = Path(__file__).parents[1] / "docs" / "DATA.md"
MODULES = [*(name.replace("-", "_") for name in TRAINED_MODELS), "fusion"]


def data_files(module: str) -> tuple[str, ...]:
    return import_module(f"app.training.{module}").DATA_FILES


@pytest.mark.parametrize("name", list(TRAINED_MODELS))
def test_train_on_an_empty_folder_is_one_line_naming_the_file_data_and_the_doc(tmp_path, name):
    result = CliRunner().invoke(app, ["train", name, "--data", str(tmp_path), "--out", str(tmp_path / "models")])
    files = data_files(name.replace("-", "_"))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"touche: error: touche train {name}: {tmp_path / files[0]} is missing (and {len(files) - 1} more); "
        "pass --data DIR holding the files docs/DATA.md lists"]
    assert not (tmp_path / "models").exists()


def test_a_missing_data_folder_is_named(tmp_path):
    result = CliRunner().invoke(app, ["train", "quality", "--data", str(tmp_path / "absent")])
    assert result.exit_code == 1
    assert result.stderr.strip() == (f"touche: error: touche train quality: no data folder {tmp_path / 'absent'}; "
                                     "pass --data DIR holding the files docs/DATA.md lists")


def test_one_missing_file_is_named_and_globs_need_a_match(tmp_path):
    files = ("a/one.txt", "b/*.csv.gz")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("")
    (tmp_path / "b").mkdir()
    with pytest.raises(Exception, match=r"b/\*\.csv\.gz is missing; pass --data"):
        require_data(tmp_path, files, "x")
    (tmp_path / "b" / "1.csv.gz").write_bytes(b"")
    require_data(tmp_path, files, "x")


@pytest.mark.parametrize("module", MODULES)
def test_docs_data_names_every_file_a_training_module_reads(module):
    page = DATA_DOC.read_text(encoding="utf-8")
    assert [name for name in data_files(module) if f"`{name}`" not in page] == []


@pytest.mark.parametrize("module", MODULES)
def test_the_shared_data_holds_every_file(shared_data, module):
    require_data(shared_data, data_files(module), module)


def test_an_output_that_cannot_take_the_models_is_refused_before_the_training(shared_data, tmp_path):
    (tmp_path / "a-file").write_text("")
    result = CliRunner().invoke(app, ["train", "questions", "--data", str(shared_data), "--out",
                                      str(tmp_path / "a-file")])
    assert result.exit_code == 1
    assert result.stderr.strip() == (f"touche: error: output path {tmp_path / 'a-file'} is a file, not a directory: "
                                     "pass a directory to --out")
