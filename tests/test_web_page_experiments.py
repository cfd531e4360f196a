"""scripts/web_page_experiments.py backs the web-page choices (README, "Web pages"): it must keep running against the
package, and its per-topic nDCG must be the acceptance evaluator's."""

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "web_page_experiments.py"


def test_the_script_runs_against_the_package():
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert all(command in result.stdout for command in ("compare", "page-stance", "short-documents", "failed-pages",
                                                        "local-bm25"))


def test_local_bm25_ranks_the_dev_pages_as_a_local_corpus(tmp_path, load_script, capsys, require_shared):
    """The figure behind passages.scored_windows (README, "Web pages"): every dev topic ranked, the pages' texts
    as the ChatNoir route reads them, titles first."""
    import json

    script = load_script("web_page_experiments")
    require_shared(script.PAGES)
    script.local_bm25(tmp_path)
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in printed] == ["2020 relevance", "2021 relevance", "2021 quality"]
    assert all(0.4 < float(line.rsplit(" ", 1)[1]) < 0.8 for line in printed)
    topics = {line.split()[0] for line in (tmp_path / "run.txt").read_text().splitlines()}
    assert len(topics) == len((script.PAGES.parent / "dev-topics.txt").read_text().strip().split(","))
    first = json.loads((tmp_path / "input" / "documents.jsonl").open().readline())
    assert first["title"] and first["text"] and "<" not in first["text"][:200]


def test_the_stand_in_can_be_taught_to_fail_pages(load_script, require_shared):
    """failed-pages patches a copy of the dev loop's stand-in: each piece it replaces is there once."""
    script = load_script("web_page_experiments")
    standin = script.SHARED / "tools" / "chatnoir_standin.py"
    require_shared(standin)
    code = standin.read_text()
    assert all(code.count(old) == 1 for old, _ in script._STANDIN_FAIL)
    for old, new in script._STANDIN_FAIL:
        code = code.replace(old, new)
    compile(code, str(standin), "exec")


def test_per_topic_ndcg_is_one_for_the_ideal_order_and_less_reversed(tmp_path, load_script, require_shared):
    script = load_script("web_page_experiments")
    require_shared(script.PAGES)
    served = {page["doc_id"] for page in script.served_pages()}
    qrels = script.YEARS["2021"][0]
    grades = defaultdict(dict)
    for line in qrels.read_text().splitlines():
        topic, _, doc_id, grade = line.split()
        if doc_id in served:
            grades[topic][doc_id] = int(grade)
    graded = {topic: found for topic, found in grades.items() if len(set(found.values())) > 1}
    assert graded
    for name, reverse in (("ideal", True), ("reversed", False)):
        with (tmp_path / name).open("w") as out:
            for topic, found in graded.items():
                ranked = sorted(found, key=lambda doc_id: (found[doc_id], doc_id), reverse=reverse)
                for rank, doc_id in enumerate(ranked, 1):
                    out.write(f"{topic} Q0 {doc_id} {rank} {1000 - rank} x\n")
    ideal = script.per_topic(tmp_path / "ideal", qrels, served, "2021")
    worst = script.per_topic(tmp_path / "reversed", qrels, served, "2021")
    assert set(ideal) == set(graded) and all(value == pytest.approx(1.0) for value in ideal.values())
    assert all(worst[topic] < 1.0 for topic in graded)
