"""scripts/question_experiments.py backs the tagger's transition weight: it must keep importing what it measures."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "question_experiments.py"


def test_the_script_still_runs_against_the_package():
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "transition-weights" in result.stdout
