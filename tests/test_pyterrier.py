"""The PyTerrier transformers (app/pyterrier.py) against `touche run` on the same candidates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pt = pytest.importorskip("pyterrier")

import ir_measures  # noqa: E402
import pandas as pd  # noqa: E402

from app.pipeline import RunSettings, run  # noqa: E402
from app.pyterrier import (ToucheOptions, ToucheReranker, ToucheStance, by_topic, to_candidates,  # noqa: E402
                           to_topic, touche_topics)
from app.records import Topic  # noqa: E402
from app.runfile import format_row, ranked_rows  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RERANK = Path(__file__).parent / "fixtures" / "rerank"
JUDGED_NDCG5 = ir_measures.nDCG(judged_only=True) @ 5
QRELS = pd.DataFrame(
    [("11", "p-cat-1", 2), ("11", "p-cat-4", 0), ("11", "p-cat-3", 1), ("12", "p-train-1", 2), ("12", "p-train-2", 1),
     ("13", "p-tea-2", 2), ("13", "p-tea-3", 0)],
    columns=["qid", "docno", "label"],
)


@pytest.fixture(scope="module")
def topics() -> pd.DataFrame:
    return touche_topics(RERANK)


@pytest.fixture(scope="module")
def documents() -> pd.DataFrame:
    """The fixture's candidates as a first stage's result rows (without topic columns)."""
    frame = pd.read_json(RERANK / "rerank.jsonl", lines=True, dtype={"qid": str, "docno": str})
    return frame[["qid", "docno", "text", "score", "rank"]]


@pytest.fixture(scope="module")
def candidates(topics, documents) -> pd.DataFrame:
    return topics.merge(documents, on="qid")


@pytest.fixture(scope="module")
def touche_runs(tmp_path_factory) -> dict[int, Path]:
    """`touche run` on the fixture, per rerank depth, each with its own cache."""
    runs = {}
    for depth in (100, 2):
        out = tmp_path_factory.mktemp(f"run-{depth}")
        report = run(RunSettings(input_dir=RERANK, output_dir=out / "out", cache_dir=out / "cache", progress=False,
                                 rerank_depth=depth))
        runs[depth] = report.run_path
    return runs


def as_run(result: pd.DataFrame, stances: bool = True) -> list[str]:
    """Result rows written the way `touche run` writes them (its tag, its score precision)."""
    lines = []
    for qid, frame in result.groupby("qid", sort=False):
        frame = frame.sort_values("rank")
        labels = frame["stance"].tolist() if stances else None
        rows = ranked_rows(str(qid), frame["docno"].tolist(), frame["score"].tolist(), labels, "touche", 1000)
        lines += [format_row(row).strip() for row in rows]
    return lines


# --- records -------------------------------------------------------------------------------------------------


def test_rows_become_the_pipelines_topics_and_candidates_in_first_stage_order():
    frame = pd.DataFrame({
        "qid": ["2", "2", "1", "2"], "query": ["cats or dogs"] * 3 + ["cats or dogs"],
        "title": ["Cats or dogs?"] * 4, "objects": ["cat, dog"] * 4,
        "docno": ["b", "a", "x", "a"], "text": ["B", "A", "X", "A again"], "score": [1.0, 2.0, 5.0, 0.5],
        "rank": [1, 0, 0, 2],
    })
    topics, frames = by_topic(frame)
    assert [topic.number for topic in topics] == ["2", "1"]  # order of first appearance, as the run's topics
    assert (topics[0].title, topics[0].objects) == ("Cats or dogs?", ("cat", "dog"))  # title wins over query
    assert frames[0]["docno"].tolist() == ["a", "b"] and frames[0]["text"].tolist() == ["A", "B"]  # one row each
    bare = to_topic(pd.Series({"qid": 7, "query": "Is tea healthier than coffee?", "objects": ("tea", "coffee")}))
    assert (bare.number, bare.title, bare.description, bare.objects) == (
        "7", "Is tea healthier than coffee?", "", ("tea", "coffee"))


def test_a_score_that_is_no_finite_number_leaves_the_rows_order_to_score_them():
    topic = Topic("1", "Cats or dogs?")
    frame = pd.DataFrame({"docno": ["a", "b", "c"], "text": ["A", "B", "C"], "score": [float("nan"), 2.0, "7"]})
    assert [c.score for c in to_candidates(topic, frame)] == [0.0, -1.0, -2.0]
    frame["score"] = [3, 2.5, "1e2"]  # numpy integers and numeric strings are numbers
    assert [c.score for c in to_candidates(topic, frame)] == [3.0, 2.5, 100.0]


def test_transformers_declare_their_columns_and_reject_frames_without_text(candidates):
    columns = list(candidates.columns)
    reranked = pt.inspect.transformer_outputs(ToucheReranker(), columns)
    assert set(reranked) >= {"score", "rank", "touche_doc_vec"}
    assert "stance" in pt.inspect.transformer_outputs(ToucheStance(), reranked)
    with pytest.raises(pt.validate.InputValidationError):
        ToucheReranker().transform(candidates.drop(columns="text"))


def test_the_core_run_never_imports_pyterrier():
    code = "import sys, app.cli, app.pipeline; sys.exit('pyterrier' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


# --- the same ranking, scores and stances as `touche run` ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("depth", [100, 2])
def test_rerank_and_stance_equal_touche_run(touche_runs, candidates, depth):
    options = ToucheOptions(rerank_depth=depth)
    reranked = ToucheReranker(options).transform(candidates)
    labelled = ToucheStance(options).transform(reranked)
    expected = touche_runs[depth].read_text().splitlines()
    assert as_run(labelled) == expected  # ranking, scores and stance (column 2) as in the run file
    assert [line.split()[2] for line in as_run(reranked, stances=False)] == [line.split()[2] for line in expected]
    # The frame's own scores too: the tail below the rerank depth shared one, and pt.Experiment sorts by score.
    assert reranked["score"].tolist() == [float(line.split()[4]) for line in expected]
    head = labelled.groupby("qid").head(depth)
    assert not head["stance"].eq("Q0").any() and labelled.drop(head.index)["stance"].eq("Q0").all()
    assert reranked.groupby("qid")["rank"].apply(list).tolist() == [list(range(4)), list(range(3)), list(range(3))]


@pytest.mark.slow
def test_the_stance_labeller_encodes_by_itself_after_another_ranker(touche_runs, candidates):
    labelled = ToucheStance().transform(candidates)  # first-stage order, no touche_doc_vec: encodes the head
    stances = {(r.qid, r.docno): r.stance for r in labelled.itertuples()}
    expected = {(line.split()[0], line.split()[2]): line.split()[1] for line in touche_runs[100].read_text().splitlines()}
    assert stances == expected  # the whole fixture is in the head, so the same labels


@pytest.mark.slow
def test_pipelines_compose_with_any_first_stage_and_evaluate(touche_runs, topics, documents):
    rerank, stance = ToucheReranker(), ToucheStance()
    from_frame = pt.Transformer.from_df(documents) >> rerank >> stance
    from_function = pt.apply.generic(lambda frame: frame.merge(documents, on="qid")) >> rerank >> stance
    expected = touche_runs[100].read_text().splitlines()
    assert as_run(from_frame(topics)) == expected
    assert as_run(from_function(topics)) == expected

    # Measures as ir_measures objects: pt.Experiment reads strings as trec_eval names ("ndcg_cut_5").
    result = pt.Experiment([from_frame], topics, QRELS, [ir_measures.nDCG @ 5, JUDGED_NDCG5], names=["touche"])
    qrels = [ir_measures.Qrel(*row) for row in QRELS.itertuples(index=False)]
    scored = [ir_measures.ScoredDoc(line.split()[0], line.split()[2], float(line.split()[4])) for line in expected]
    assert 0 < result["nDCG@5"].iloc[0] <= 1
    assert result[str(JUDGED_NDCG5)].iloc[0] == pytest.approx(ir_measures.calc_aggregate([JUDGED_NDCG5], qrels,
                                                                                         scored)[JUDGED_NDCG5])


@pytest.mark.slow
def test_the_label_set_follows_the_topics_or_the_task(candidates):
    unnamed = candidates.drop(columns="objects")  # the question classifier finds the comparisons and the objects
    assert set(ToucheStance().transform(unnamed)["stance"]) <= {"FIRST", "SECOND", "NEUTRAL", "NO"}
    forced = ToucheStance(task="controversial").transform(candidates)
    assert set(forced["stance"]) <= {"PRO", "CON", "NEU", "NO"}
