"""scripts/stance_experiments.py backs the stance choices the README reports (most of them negative results): it
must keep importing what it measures."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "stance_experiments.py"


def test_the_script_still_runs_against_the_package():
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "comparative-cross" in result.stdout and "neutral-proxy" in result.stdout


def test_mark_replaces_each_objects_mentions(load_script):
    mark = load_script("stance_experiments").mark
    assert mark("Laptops or a desktop?", [(0, 7)], [(13, 20)]) == "[A] or a [B]?"
    assert mark("abcdef", [(0, 3)], [(2, 5)]) == "[A]def"  # an overlapping later span is left alone
    assert mark("no objects", [], []) == "no objects"


def test_length_free_reads_every_count_column_as_a_rate_and_nothing_else(load_script):
    from app.stance import FEATURE_NAMES

    counted = [FEATURE_NAMES[i] for i in load_script("stance_experiments")._COUNT_COLUMNS]
    assert counted == [f"{role}_{name}" for role in ("first", "second")
                       for name in ("mentions", "alone_positive", "alone_negative", "favoured")] + [
        "positive", "negative", "than", "questions"]
