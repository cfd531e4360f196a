"""The PyTerrier transformers (app/pyterrier.py) against `touche run` on the same candidates."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

pt = pytest.importorskip("pyterrier")

import ir_measures  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from app.errors import ToucheError  # noqa: E402
from app.pipeline import RunSettings, run  # noqa: E402
from app.pyterrier import (ToucheOptions, ToucheReranker, ToucheStance, by_topic, to_topic,  # noqa: E402
                           touche_topics)
from app.runfile import format_row, ranked_rows  # noqa: E402

# A topic ranked by order: the first-stage scores `records.scores_or_order` gives it.
ORDER = [1 / (1 + position / 100) for position in range(10)]

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
    topics, frames, candidates = by_topic(frame)
    assert [topic.number for topic in topics] == ["2", "1"]  # order of first appearance, as the run's topics
    assert (topics[0].title, topics[0].objects) == ("Cats or dogs?", ("cat", "dog"))  # title wins over query
    assert frames[0]["docno"].tolist() == ["a", "b"] and frames[0]["text"].tolist() == ["A", "B"]  # one row each
    assert [c.doc.doc_id for c in candidates["2"]] == ["a", "b"]
    bare = to_topic("7", pd.Series({"qid": 7, "query": "Is tea healthier than coffee?", "objects": ("tea", "coffee")}))
    assert (bare.number, bare.title, bare.description, bare.objects) == (
        "7", "Is tea healthier than coffee?", "", ("tea", "coffee"))
    rewritten = to_topic("7", pd.Series({"query": "tea^2 coffee", "query_0": "Tea or coffee?"}))
    assert rewritten.title == "Tea or coffee?"  # the query before a rewrite, as PyTerrier keeps it
    # Fields read as a topics file's: a blank title gave way to nothing, a lone surrogate reached the tokenizer.
    odd = to_topic("7", pd.Series({"title": " \u200b ", "query": "Tea\n\tor  coffee\ud800?", "objects": ("tea", "")}))
    assert (odd.title, odd.objects) == ("Tea or coffee\ufffd?", None)
    assert to_topic("7", pd.Series({"query": "Tea?", "objects": np.array(["tea", "coffee"])})).objects == (
        "tea", "coffee")


def test_a_score_that_is_no_finite_number_leaves_the_rows_order_to_score_them(caplog):
    """As a re-rank file's: said in a warning, as `touche run` says it of the file (it was not)."""
    frame = pd.DataFrame({"qid": "1", "query": "Cats or dogs?", "docno": ["a", "b", "c"], "text": ["A", "B", "C"],
                          "score": [float("nan"), 2.0, "7"]})
    assert [c.score for c in by_topic(frame)[2]["1"]] == ORDER[:3]
    assert "the result frame: 1 of its topics in frame order (e.g. 1): a score and a rank missing" in caplog.text
    caplog.clear()
    frame["score"] = [3, 2.5, "1e2"]  # numpy integers and numeric strings are numbers
    assert [c.score for c in by_topic(frame)[2]["1"]] == [100.0, 3.0, 2.5]
    assert "frame order" not in caplog.text


def test_rows_are_read_as_touche_run_reads_a_rerank_files_lines(caplog):
    """What a user's frame holds was read otherwise than the same lines in a re-rank file: NaN and blank texts
    scored as "nan" and took reranked slots; ranks as strings sorted "10" before "2"; 2 and "2", or 1 and "1",
    were a raw pandas error; a NaN qid dropped its row unsaid; tied ranks went to the frame's order."""
    frame = pd.DataFrame({
        "qid": [2, "2", 2, 2, 2, None, 2, 2],
        "docno": ["d10", "d2", "d3", "d4", " d5", "d6", "d2", 7],
        "text": ["ten", "two", np.nan, "   ", "five", "six", "two again", "seven"],
        "rank": ["10", "2", "3", "4", "5", "6", "1", "2"],
        "score": [1.0, 9.0, 8.0, 7.0, 6.0, 5.0, 9.5, 9.1],
        "query": "Tea or coffee?",
    })
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        topics, frames, candidates = by_topic(frame)
    assert [topic.number for topic in topics] == ["2"]
    assert [c.doc.doc_id for c in candidates["2"]] == ["7", "d2", "d5", "d10"]  # "7" ties "d2" at 2, scores higher
    assert frames[0]["docno"].tolist() == ["7", "d2", "d5", "d10"] and frames[0]["text"].tolist()[1] == "two"
    assert frames[0]["qid"].tolist() == ["2", "2", "2", "2"]  # 2 and "2": strings, as PyTerrier writes qids
    assert caplog.messages == ["the result frame: skipped 4 records (1 duplicate id, 1 row without a usable id, "
                               "2 rows without text)"]
    rising = frame.iloc[[0, 1, 4]].assign(score=[10.0, 2.0, 5.0])  # distances, as a run ignores them
    assert [c.score for c in by_topic(rising)[2]["2"]] == ORDER[:3]
    floats = frame.iloc[[0, 1]].assign(qid=[11.0, 11.0])  # a numeric qid column with a NaN is float: 11.0 scored 0
    assert by_topic(floats)[1][0]["qid"].tolist() == [11, 11]
    mixed = frame.iloc[[0, 2, 4]].assign(qid=["1", 2, 3.0], text="tea")  # one type for every topic of the output
    assert [found["qid"].tolist() for found in by_topic(mixed)[1]] == [["1"], ["2"], ["3"]]
    untitled = frame.iloc[[0, 4]].assign(qid=[1, 2], text="tea", query=["Tea?", " "])  # costs its own rows only
    with caplog.at_level(logging.WARNING):
        assert [topic.number for topic in by_topic(untitled)[0]] == ["1"]
    assert "topic 2: no text in its rows' title, query_0 or query; its rows are skipped" in caplog.text


@pytest.mark.parametrize("options, message", [
    ({"rerank_depth": -2}, "rerank_depth must be an integer of at least 1, got -2"),
    ({"rerank_depth": 5.0}, "rerank_depth must be an integer of at least 1, got 5.0"),
    ({"stance_model": "crosss"}, "stance_model must be one of cross, head, got 'crosss'"),
    ({"device": "gpu"}, "device must be one of auto, cpu, cuda, got 'gpu'"),
    ({"precision": "fp16"}, "precision must be one of auto, fp32, bf16, got 'fp16'"),
])
def test_options_touche_run_would_refuse_are_errors(options, message):
    """They were taken silently (`rerank_depth=-2` reranked all but the last two rows) or failed deep inside."""
    with pytest.raises(ToucheError, match=re.escape(f"ToucheOptions: {message}")):
        ToucheOptions(**options)
    assert type(ToucheOptions(rerank_depth=np.int64(50)).rerank_depth) is int


def test_a_stance_task_of_no_label_set_is_an_error_when_built():
    """`ToucheStance(task="comparativ")` was taken, and failed only at the first transform."""
    with pytest.raises(ToucheError, match="unknown task 'comparativ': choose one of comparative, controversial"):
        ToucheStance(task="comparativ")


def test_a_cuda_device_torch_cannot_see_is_an_error_before_the_work(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ToucheError, match=r"^ToucheOptions: device='cuda': torch .* sees no CUDA device; use "
                                          r"device='auto' or 'cpu'$"):
        ToucheOptions(device="cuda")


def test_transformers_declare_their_columns_and_reject_frames_without_text(candidates):
    columns = list(candidates.columns)
    reranked = pt.inspect.transformer_outputs(ToucheReranker(), columns)
    assert set(reranked) >= {"score", "rank", "touche_doc_vec"}
    assert "stance" in pt.inspect.transformer_outputs(ToucheStance(), reranked)
    with pytest.raises(pt.validate.InputValidationError):
        ToucheReranker().transform(candidates.drop(columns="text"))


def test_stance_reads_a_long_documents_second_passage_from_the_reranker_columns(monkeypatch):
    """A long document's two best passages (`touche_passage_2`, `touche_doc_vec_2`) are read together, as `touche
    run` reads them on comparative topics; a document of one passage (None there) by its own."""
    from app.pyterrier import DOC_VECTOR, PASSAGE, SECOND_PASSAGE, SECOND_VECTOR
    from app.records import Topic

    vectors = np.eye(3, 384, dtype=np.float32)
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "text": ["A whole.", "B"], "score": [2.0, 1.0],
                          PASSAGE: ["A whole.", "B best."], DOC_VECTOR: [vectors[0], vectors[1]],
                          SECOND_PASSAGE: [None, "B second."], SECOND_VECTOR: [None, vectors[2]]})
    encoded, read = ToucheStance()._head([Topic("1", "Tea or coffee?")], [frame], {}, ToucheOptions().run_settings())
    assert read == {"1": {"a": [0], "b": [1, 2]}}
    assert encoded.texts == ["A whole.", "B best.", "B second."] and encoded.documents == ["A whole.", "B", "B"]
    assert encoded.vectors.tobytes() == vectors.tobytes()
    # An older reranker's frame (no second columns), or one concatenated with such (NaN there): read anew, as the
    # run reads, not by one passage each
    import app.pyterrier

    def score_candidates(*args):
        raise LookupError("read anew")

    monkeypatch.setattr(app.pyterrier, "score_candidates", score_candidates)
    for older in (frame.drop(columns=[SECOND_PASSAGE, SECOND_VECTOR]), frame.assign(**{SECOND_VECTOR: np.nan})):
        with pytest.raises(LookupError, match="read anew"):
            ToucheStance()._head([Topic("1", "Tea or coffee?")], [older], {}, ToucheOptions().run_settings())


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


def test_the_stance_labeller_holds_the_tails_texts_as_touche_run_does(monkeypatch):
    """A debate's closing title is sought in whole texts only: a long argument below the rerank depth, cut in a run,
    was whole to the labeller, which then read a head argument otherwise."""
    import app.pyterrier
    from app.records import MAX_UNREAD_TEXT_CHARS

    held = {}

    def detect_stances(topics, ranked, read, encoded, queries, task, settings, candidates):
        held.update(candidates)
        return {topic.number: ["Q0"] * len(ranked[topic.number].doc_ids) for topic in topics}

    monkeypatch.setattr(app.pyterrier, "detect_stances", detect_stances)
    monkeypatch.setattr(ToucheStance, "_head", lambda self, *args: (None, {}))
    monkeypatch.setattr(app.pyterrier, "encode_queries", lambda topics, settings: {})
    long_text = "Body cameras cost money. " * 2_000  # 50,000 characters
    frame = pd.DataFrame({"qid": ["1"] * 3, "query": ["Should police wear body cameras?"] * 3,
                          "docno": ["S1-A1", "S1-A2", "S1-A3"], "text": ["Cameras protect citizens.", long_text,
                                                                         long_text], "score": [3.0, 2.0, 1.0],
                          "rank": [0, 1, 2]})
    ToucheStance(ToucheOptions(rerank_depth=2), task="controversial").transform(frame)
    assert [len(candidate.doc.text) for candidate in held["1"]] == [25, len(long_text.strip()), MAX_UNREAD_TEXT_CHARS]
