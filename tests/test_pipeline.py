"""The whole pipeline on small inputs of each layout and on the real TIRA-style input (slow: real models)."""

import shutil

import pytest

from app.errors import ToucheError
from app.pipeline import DEMO_INPUT, RunSettings, run
from app.retrieval import first_stage
from app.topics import read_topics
from app.runfile import validate_run


@pytest.fixture
def no_model_loads(monkeypatch):
    """The question classifier, the first model a run loads, fails the test if it is loaded."""
    import app.questions as questions

    def load_classifier(*args, **kwargs):
        raise AssertionError("a model loaded")

    monkeypatch.setattr(questions, "load_classifier", load_classifier)


def run_on(input_dir, output_dir, **options):
    report = run(RunSettings(input_dir=input_dir, output_dir=output_dir, progress=False, **options))
    lines = report.run_path.read_text().splitlines()
    return report, [line.split() for line in lines]


@pytest.mark.slow
def test_passages_rank_on_topic_arguments_first(fixtures, tmp_path):
    report, rows = run_on(fixtures / "passages", tmp_path)
    assert validate_run(tmp_path).ok
    top = {qid: next(r[2] for r in rows if r[0] == qid) for qid in ("11", "12", "13")}
    assert top["11"].startswith("p-cat") and top["12"].startswith("p-train") and top["13"].startswith("p-tea")
    assert report.documents == 11 and set(report.stages) >= {"index build", "dense encoding", "write"}


@pytest.mark.slow
def test_stance_labels_follow_the_task(fixtures, tmp_path):
    _, rows = run_on(fixtures / "passages", tmp_path / "comparative")
    assert {r[1] for r in rows} <= {"FIRST", "SECOND", "NEUTRAL", "NO", "Q0"}
    assert {r[1] for r in rows} - {"Q0"}  # the reranked head is labelled
    _, rows = run_on(fixtures / "argsme", tmp_path / "controversial")
    assert {r[1] for r in rows} <= {"PRO", "CON", "NEU", "NO", "Q0"}
    # One topic the question classifier reads as a comparison, on args.me, whose arguments state PRO / CON: the run
    # was comparative, its labels FIRST / SECOND toward "nuclear energy" and "solar power".
    (tmp_path / "one").mkdir()
    shutil.copy(fixtures / "argsme" / "args-me.json", tmp_path / "one")
    (tmp_path / "one" / "topics.xml").write_text("<topics><topic><number>2</number><title>Is nuclear energy better "
                                                 "than solar power?</title></topic></topics>")
    _, rows = run_on(tmp_path / "one", tmp_path / "one-out")
    assert {r[1] for r in rows} - {"Q0"} and {r[1] for r in rows} <= {"PRO", "CON", "NEU", "NO", "Q0"}
    _, rows = run_on(fixtures / "passages", tmp_path / "off", stance=False)
    assert {r[1] for r in rows} == {"Q0"}
    _, rows = run_on(fixtures / "passages", tmp_path / "forced", task="controversial")
    assert {r[1] for r in rows} <= {"PRO", "CON", "NEU", "NO", "Q0"}


@pytest.mark.slow
def test_stance_cross_encoder_relabels_only_the_top(fixtures, tmp_path):
    # Passages state no stance of their own (args.me's stated stances are oriented by the cross-encoder throughout).
    options = dict(task="controversial")
    _, heads = run_on(fixtures / "passages", tmp_path / "head", stance_model="head", **options)
    _, cross = run_on(fixtures / "passages", tmp_path / "cross", stance_depth=2, **options)
    assert [r[2] for r in heads] == [r[2] for r in cross]  # stance never moves the ranking
    assert [r[1] for r in heads if int(r[3]) > 2] == [r[1] for r in cross if int(r[3]) > 2]
    assert {r[1] for r in cross} <= {"PRO", "CON", "NEU", "NO", "Q0"}
    _, off = run_on(fixtures / "passages", tmp_path / "depth0", stance_depth=0, **options)
    assert off == heads


@pytest.mark.slow
def test_balance_stance_keeps_the_documents_and_a_valid_run(fixtures, tmp_path):
    _, plain = run_on(fixtures / "argsme", tmp_path / "plain")
    _, balanced = run_on(fixtures / "argsme", tmp_path / "balanced", balance_stance=True)
    assert validate_run(tmp_path / "balanced").ok
    for qid in ("1", "2", "3"):
        assert sorted(r[2] for r in plain if r[0] == qid) == sorted(r[2] for r in balanced if r[0] == qid)


@pytest.mark.slow
def test_argsme_and_rerank_layouts(fixtures, tmp_path):
    _, rows = run_on(fixtures / "argsme", tmp_path / "argsme", depth=2)
    assert validate_run(tmp_path / "argsme").ok
    assert max(int(r[3]) for r in rows) == 2
    _, rows = run_on(fixtures / "rerank", tmp_path / "rerank", tag="rr")
    assert {r[2] for r in rows if r[0] == "13"} == {"p-tea-1", "p-tea-2", "p-tea-3"}  # only the given candidates
    assert {r[5] for r in rows} == {"rr"}


def test_a_run_too_short_for_tira_by_its_depth_is_said_before_the_work(fixtures, tmp_path, caplog, monkeypatch):
    """--depth 1 on 3 topics: 3 lines, where TIRA wants 5; said before the first stage, not after the run."""
    import app.pipeline as pipeline

    def first_stage(*args):
        raise ToucheError("the work begins")

    monkeypatch.setattr(pipeline, "first_stage", first_stage)
    with pytest.raises(ToucheError, match="the work begins"):
        run(RunSettings(input_dir=fixtures / "passages", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                        depth=1, progress=False))
    assert "TIRA will reject this run: 3 topics of at most 1 document each: at most 3 lines" in caplog.text


@pytest.mark.parametrize("problem, error", [("tag", "tag"), ("output", "exists; pass --overwrite")])
def test_a_bad_tag_or_an_output_in_the_way_is_said_before_the_work(fixtures, tmp_path, monkeypatch, problem, error):
    """The command line checks both first; a caller from Python learnt them after the work (an attack)."""
    import app.pipeline as pipeline

    def first_stage(*args):
        raise AssertionError("the work began")

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.txt").write_text("an old run\n")
    monkeypatch.setattr(pipeline, "first_stage", first_stage)
    with pytest.raises(ToucheError, match=error):
        run(RunSettings(input_dir=fixtures / "passages", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                        tag="my tag" if problem == "tag" else "ok", overwrite=problem == "tag", progress=False))
    assert (tmp_path / "out" / "run.txt").read_text() == "an old run\n"


def test_a_run_called_from_python_that_fails_leaves_no_directory_it_made(tmp_path):
    """The output's check before the work made new/out, and a failed run left both behind (a review)."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(ToucheError, match="no topics"):
        run(RunSettings(input_dir=tmp_path / "empty", output_dir=tmp_path / "new" / "out",
                        cache_dir=tmp_path / "cache", progress=False))
    assert not (tmp_path / "new").exists()


def test_a_run_too_short_for_tira_by_its_candidates_is_said_before_the_models_load(fixtures, tmp_path, caplog,
                                                                                     monkeypatch):
    """A re-rank file of 1 of the 3 topics: the run TIRA rejects was said after all the work only."""
    import shutil

    import app.pipeline as pipeline

    def topic_task(*args):
        raise ToucheError("the models load")

    shutil.copy(fixtures / "rerank" / "topics.xml", tmp_path)
    lines = (fixtures / "rerank" / "rerank.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "rerank.jsonl").write_text("".join(line for line in lines if '"qid": "11"' in line))
    monkeypatch.setattr(pipeline, "topic_task", topic_task)
    with pytest.raises(ToucheError, match="the models load"):
        run(RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                        progress=False))
    assert "TIRA will reject this run: the candidates give at most 4 lines; at least 5 are required" in caplog.text
    assert "TIRA will reject this run: 1 of 3 topics found candidates; at least 3 are required" in caplog.text


@pytest.mark.parametrize("layout, error", [
    ("xz", "packed with xz, which is not read here"),
    ("two corpora", "two corpora in"),
    ("chatnoir retries", "CHATNOIR_RETRIES"),
])
def test_a_wrong_corpus_or_chatnoir_setting_is_said_before_any_model_loads(fixtures, tmp_path, monkeypatch, layout,
                                                                           error, no_model_loads):
    """They were said after the question classifier and the encoder had loaded (13 s), in the first stage."""
    import lzma

    shutil.copy(fixtures / "passages" / "topics.xml", tmp_path)
    passages = (fixtures / "passages" / "passages.jsonl").read_bytes()
    if layout == "xz":
        (tmp_path / "passages.jsonl").write_bytes(lzma.compress(passages))
    elif layout == "two corpora":
        (tmp_path / "passages.jsonl").write_bytes(passages)
        shutil.copy(fixtures / "argsme" / "args-me.json", tmp_path)
    else:
        (tmp_path / "chatnoir-credentials.json").write_text('{"apikey": "KEY"}')
        monkeypatch.setenv("CHATNOIR_RETRIES", "99")
    with pytest.raises(ToucheError, match=error):
        run(RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                        progress=False))


@pytest.mark.parametrize("corpus, titles, error", [
    # It was said as run.txt was to be written, after the question classifier and the encoder had loaded.
    ("passages/passages.jsonl", {"1": "Is it the?", "2": "???"}, "the run is empty: no topic retrieved any document"),
    # It needs the file read, and was said after the question classifier had loaded (about 10 s).
    ("rerank/rerank.jsonl", {"99": "Tea or coffee?"}, "holds none of the 1 topics' numbers"),
])
def test_a_run_that_finds_nothing_is_said_before_any_model_loads(fixtures, tmp_path, no_model_loads, corpus, titles,
                                                                 error):
    shutil.copy(fixtures / corpus, tmp_path)
    (tmp_path / "topics.xml").write_text("<topics>" + "".join(
        f"<topic><number>{number}</number><title>{title}</title></topic>" for number, title in titles.items())
        + "</topics>")
    with pytest.raises(ToucheError, match=error):
        run(RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                        progress=False))
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_report_counts_the_topics_the_run_holds(fixtures, tmp_path):
    """A topic that finds nothing is not in the run: "wrote ... for 3 topics" beside "the run has 2 topics" misled."""
    shutil.copy(fixtures / "rerank" / "rerank.jsonl", tmp_path)
    (tmp_path / "topics.xml").write_text("<topics><topic><number>11</number><title>Tea or coffee?</title></topic>"
                                         "<topic><number>12</number><title>Cats or dogs?</title></topic>"
                                         "<topic><number>99</number><title>Zebras or okapis?</title></topic></topics>")
    report, rows = run_on(tmp_path, tmp_path / "out", cache_dir=tmp_path / "cache")
    assert {row[0] for row in rows} == {"11", "12"} and report.topics == 2


def test_copies_of_one_text_keep_the_first_stages_order(tmp_path):
    """One error page served for every result (or mirrors) scored apart by the first-stage score alone, which the
    relevance head weighs slightly below zero: ChatNoir's order among them came out reversed."""
    import json

    wall = "We use cookies to improve your experience. Accept all cookies to continue reading this page."
    lines = [{"qid": "11", "query": "Cats or dogs?", "docno": f"copy-{n}", "text": wall, "rank": n, "score": 10.0 - n}
             for n in range(1, 7)]
    lines.insert(3, {"qid": "11", "query": "Cats or dogs?", "docno": "argument", "rank": 4, "score": 6.5,
                     "text": "Cats are better pets than dogs because they need no walks and live happily in flats."})
    for line in lines[4:]:
        line["rank"] += 1
    (tmp_path / "rerank.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "topics.xml").write_text("<topics><topic><number>11</number><title>Cats or dogs?</title></topic>"
                                         "</topics>")
    _, rows = run_on(tmp_path, tmp_path / "out", cache_dir=tmp_path / "cache")
    order = [row[2] for row in rows]
    assert [doc for doc in order if doc.startswith("copy-")] == [f"copy-{n}" for n in range(1, 7)]
    assert len({row[1] for row in rows if row[2].startswith("copy-")}) == 1  # each read as the first copy
    assert order[0] == "argument"


def test_no_break_spaces_and_decomposed_accents_read_as_plain_text(tmp_path):
    """The same passages with no-break spaces, or with "café" as "e" and a combining accent (NFD), flipped stance
    labels (FIRST to SECOND) and missed BM25 matches: the sentence splitter and the stance features took a no-break
    space for no space, and the decomposed word for another (an object "thé" read as the function word "the")."""
    import gzip
    import json
    import re
    import unicodedata

    documents = [json.loads(line) for line in gzip.open(DEMO_INPUT / "passages.jsonl.gz", "rt")]
    topics = re.sub(r"(?s)<topic>\s*<number>(?![12]<).*?</topic>", "", (DEMO_INPUT / "topics.xml").read_text())
    plain, odd = tmp_path / "plain", tmp_path / "odd"
    for directory, change in ((plain, lambda text: text), (odd, lambda text: unicodedata.normalize(
            "NFD", text.replace(". ", ".\u00a0").replace(" is ", "\u00a0is\u00a0")))):
        directory.mkdir()
        lines = [json.dumps({"id": d["id"], "contents": change(d["contents"].replace("coffee", "café"))})
                 for d in documents]
        (directory / "passages.jsonl").write_text("\n".join(lines) + "\n")
        (directory / "topics.xml").write_text(change(topics.replace("coffee", "café")))
    assert topics.count("<topic>") == 2 and (odd / "passages.jsonl").read_text() != (plain / "passages.jsonl").read_text()
    run_on(plain, tmp_path / "out-plain")
    run_on(odd, tmp_path / "out-odd")
    assert (tmp_path / "out-odd" / "run.txt").read_text() == (tmp_path / "out-plain" / "run.txt").read_text()


@pytest.mark.slow
def test_candidates_below_the_rerank_depth_follow_in_bm25_order(fixtures, tmp_path):
    settings = RunSettings(input_dir=fixtures / "passages", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           progress=False, rerank_depth=1)
    candidates_by_topic = first_stage(settings, read_topics(settings.input_dir)).candidates
    report = run(settings)
    assert report.origin == "BM25 over passages.jsonl"  # what ir-metadata.yml records as the first stage
    rows = [line.split() for line in report.run_path.read_text().splitlines()]
    for qid, found in candidates_by_topic.items():
        tail = [r[2] for r in rows if r[0] == qid][1:]
        assert tail == [c.doc.doc_id for c in found[1:]], qid


@pytest.mark.slow
def test_the_demo_ranks_and_labels_as_it_did(fixtures, tmp_path):
    """What a run ranks and labels, pinned on the bundled demo (`fixtures/demo-run.txt`, its run when the scoring
    last changed on purpose: regenerate it with `touche run -i app/demo -o DIR --device cpu --precision fp32`
    then): a feature's weight, scale or input changed without a word moved no effectiveness bound of the dev
    topics. In fp32 (auto picks bf16 where the CPU has it: scores 1.8e-3 apart) another CPU's arithmetic moves
    scores by about 1e-7: they may differ by 1e-3, stance labels in one row of 50."""
    _, rows = run_on(DEMO_INPUT, tmp_path, device="cpu", precision="fp32")
    expected = [line.split() for line in (fixtures / "demo-run.txt").read_text(encoding="utf-8").splitlines()]
    ran = {(row[0], row[2]): (float(row[4]), row[1]) for row in rows}
    pinned = {(row[0], row[2]): (float(row[4]), row[1]) for row in expected}
    assert ran.keys() == pinned.keys()
    assert [key for key, (score, _) in pinned.items() if abs(ran[key][0] - score) > 1e-3] == []
    assert len([key for key, (_, label) in pinned.items() if ran[key][1] != label]) <= len(pinned) // 50


def test_demo_input_ships_in_the_package(tmp_path, caplog):
    report, rows = run_on(DEMO_INPUT, tmp_path)
    assert report.topics == 12 and report.documents == 100
    assert validate_run(tmp_path).ok
    assert "are ignored" not in caplog.text


def test_stance_options_comparative_topics_do_not_read_are_said_to_be_ignored(tmp_path, caplog):
    """The demo's topics are comparative, whose stance the heads read: --stance-depth was passed over unsaid. A depth
    past --rerank-depth is not said to be cut there too: the two warnings contradicted each other."""
    run_on(DEMO_INPUT, tmp_path, stance_depth=30, rerank_depth=10)
    assert "comparative topics: their stance is read by the heads alone, so --stance-depth 30 is ignored" in caplog.text
    assert "the top --rerank-depth" not in caplog.text


@pytest.mark.slow
def test_a_stance_depth_past_the_rerank_depth_is_said_on_controversial_topics(fixtures, tmp_path, caplog):
    """It was silent: the cross-encoder reads the reranked documents only."""
    run_on(fixtures / "argsme", tmp_path, stance_depth=30, rerank_depth=3)
    assert "--stance-depth 30: the stance cross-encoder reads the reranked documents, the top --rerank-depth 3" \
        in caplog.text


@pytest.mark.slow
def test_full_pipeline_on_the_touche_2022_tira_input(shared_data, tmp_path):
    """A valid run, as effective on the dev topics as measured (`touche evaluate` with the dev qrels: 0.769, 0.725,
    0.759 when written), less a margin for another CPU's arithmetic: a stage scoring otherwise (a feature dropped,
    the wrong text read) passed every other test."""
    from app.evaluate import evaluate_run

    task = shared_data / "touche-2022-task2"
    report, rows = run_on(task / "tira-input", tmp_path)
    result = validate_run(tmp_path, "comparative")
    assert result.ok, result.errors
    assert report.topics == 50 and result.topics == 50 and report.documents == 2587
    qrels = [task / f"touche-task2-2022-{kind}-dev.qrels" for kind in ("relevance", "quality", "stance")]
    scores = evaluate_run(tmp_path, *qrels).mean
    assert scores["relevance nDCG@5 judged-only"] >= 0.75
    assert scores["quality nDCG@5 judged-only"] >= 0.70
    assert scores["stance macro-F1"] >= 0.73
