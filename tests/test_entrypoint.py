"""The real entrypoint, called the way TIRA calls it, on a fixture input directory."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.runfile import validate_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_entrypoint_writes_a_valid_run_from_tira_variables(fixtures, tmp_path):
    # The console script sits beside the interpreter running the tests (the venv need not be on PATH).
    touche = shutil.which("touche", path=str(Path(sys.executable).parent)) or shutil.which("touche")
    assert touche, "the touche console script must be installed (make setup)"
    inputs, outputs = tmp_path / "input", tmp_path / "output"
    shutil.copytree(fixtures / "passages", inputs)
    os.chmod(inputs, 0o555)
    environment = {**os.environ, "inputDataset": str(inputs), "outputDir": str(outputs),
                   "PATH": f"{Path(touche).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["sh", "-c", f"{ROOT / 'entrypoint.sh'} -i $inputDataset -o $outputDir --quiet"],
                          env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout stays clean
    assert validate_run(outputs).ok
    # the run and its ir_metadata; the cache is documented (and moving out of the output dir)
    names = {p.name for p in outputs.iterdir()}
    assert {"run.txt", "ir-metadata.yml"} <= names <= {"run.txt", "ir-metadata.yml", "touche-cache"}
    assert "run" in yaml.safe_load((outputs / "ir-metadata.yml").read_text())["implementation"]["executable"]["cmd"]
