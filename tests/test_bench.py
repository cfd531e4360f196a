"""The benchmark's synthetic inputs and its results schema (the pipeline-running part is slow)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from app import bench
from app.corpus import detect_corpus, read_documents

WORDS = "the a should we use python or java for beginners cats dogs pets better loyal".split()


@pytest.fixture
def data(tmp_path):
    """A stand-in for ../shared/data: 60 real-layout passages of 5..40 words and a topics file."""
    rng = np.random.default_rng(0)
    task = tmp_path / "data" / "touche-2022-task2"
    (task / "tira-input").mkdir(parents=True)
    with gzip.open(task / "tira-input" / "passages.jsonl.gz", "wt", encoding="utf-8") as out:
        for i in range(60):
            text = " ".join(rng.choice(WORDS, size=5 + i % 36))
            out.write(json.dumps({"id": f"p{i}", "contents": text}) + "\n")
    (task / "topics-task2.xml").write_text(
        "<topics><topic><number>1</number><title>Python or Java for beginners?</title>"
        "<objects>Python, Java</objects></topic></topics>")
    (task / "tira-input" / "topics.xml").write_text((task / "topics-task2.xml").read_text())
    return tmp_path / "data"


def test_parse_size():
    assert bench.parse_size("10k") == 10_000
    assert bench.parse_size("868k") == 868_000
    assert bench.parse_size("200") == 200
    assert bench.parse_size("tira-input") is None and bench.parse_size("tira-input-controversial") is None
    with pytest.raises(ValueError):
        bench.parse_size("ten")


def test_an_unknown_size_is_a_usage_error_before_any_work(tmp_path, capsys):
    """`--sizes 10k,nonsense` built the 10k input, then ended in a traceback."""
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--sizes", "10k,nonsense", "--out", str(tmp_path)])
    assert exit_.value.code == 2 and "size 'nonsense': expected e.g. 10k" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("size", ["10k", "tira-input", "long-document", "web-pages", "args-me", "args-me-387k"])
def test_data_an_input_needs_is_named_before_any_work(tmp_path, capsys, size):
    """Without ../shared/data each input ended in a traceback (AttributeError, FileNotFoundError), after the inputs
    before it had taken their minutes."""
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--sizes", size, "--data", str(empty), "--out", str(tmp_path / "out")])
    name = "synthetic" if size == "10k" else size
    assert exit_.value.code == 1 and f"python -m app.bench ({name}): {empty}/" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--effectiveness", "--data", str(empty)])
    assert "python -m app.bench (effectiveness): " in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_measuring_child_checks_no_data(tmp_path, monkeypatch, capsys):
    """The parent checks the data and hands its child an input (and no --data): the child checked its default
    sizes against the default folder, and in a checkout without ../shared every measurement failed (a review)."""
    monkeypatch.setattr(bench, "measure", lambda *args: {"input": "x"})
    bench.main(["--measure", str(tmp_path), "--name", "x", "--data", str(tmp_path / "absent"),
                "--out", str(tmp_path / "out")])
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"input": "x"}


def test_synthetic_input_has_the_real_layout_and_lengths(data, tmp_path):
    target = bench.write_synthetic(tmp_path / "synthetic-200", 200, data, seed=1, progress=False)
    documents = list(read_documents(detect_corpus(target)))
    assert len(documents) == 200 and len({document.doc_id for document in documents}) == 200
    lengths = [len(document.text.split()) for document in documents]
    assert min(lengths) >= 5 and max(lengths) <= 40
    new_words = {word for document in documents for word in document.text.split()} - set(WORDS)
    assert all(word.startswith("zq") for word in new_words)
    assert (target / "topics.xml").read_text().count("<topic>") == 1


def test_long_document_input_is_real_passages_and_one_huge_one(data, tmp_path):
    from app.records import MAX_TEXT_CHARS

    target = bench.write_long_document(tmp_path / bench.LONG_DOCUMENT, data)
    assert (target / "passages.jsonl").stat().st_size > bench.LONG_DOCUMENT_CHARS
    documents = list(read_documents(detect_corpus(target)))
    assert len(documents) == 61 and documents[-1].doc_id == "long-document"
    assert len(documents[-1].text) == MAX_TEXT_CHARS  # what every stage reads of it


def test_web_pages_input_is_the_dev_pages_read_as_text_with_the_dev_topics(data, tmp_path):
    pages = data / "web-pages-clueweb12"
    pages.mkdir()
    (pages / "dev-topics.txt").write_text("2,52\n")
    with gzip.open(pages / "pages-dev.jsonl.gz", "wt", encoding="utf-8") as out:
        for doc_id, body in (("clueweb12-01", "<nav>Home</nav><p>Cats are loyal.</p>"), ("clueweb12-02", "x\x00y")):
            out.write(json.dumps({"doc_id": doc_id, "html": f"<title>T</title><body>{body}</body>"}) + "\n")
    for folder, name, numbers in (("touche-2020-task2", "topics-task-2.xml", (1, 2)),
                                  ("touche-2021-task2", "topics-task-2-2021-only-titles.xml", (51, 52))):
        (data / folder).mkdir()
        (data / folder / name).write_text("<topics>" + "".join(
            f"<topic><number>{n}</number><title>Cats or dogs {n}?</title></topic>" for n in numbers) + "</topics>")
    target = bench.write_web_pages(tmp_path / bench.WEB_PAGES, data)
    assert [(d.doc_id, d.text) for d in read_documents(detect_corpus(target))] == [
        ("clueweb12-01", "Cats are loyal."), ("clueweb12-02", "xy")]  # main content: no menu; a NUL goes
    assert (target / "topics.xml").read_text().count("<topic>") == 2  # topics 2 and 52: the dev topics
    assert bench.parse_size(bench.WEB_PAGES) is None


def test_synthetic_vocabulary_grows_as_heaps_law_says():
    model = bench.PassageModel(np.array([50]), ["the", "cat"], np.array([2.0, 1.0]), heaps_k=10.0, heaps_beta=0.5)
    rng = np.random.default_rng(0)
    texts = [text for _ in range(4) for text in model.sample(500, rng)]  # 100,000 tokens in four chunks
    tokens = " ".join(texts).split()
    assert len(tokens) == model.tokens == 100_000
    assert len(set(tokens)) == pytest.approx(10.0 * 100_000 ** 0.5, rel=0.1)
    assert bench.novel_word(0) != bench.novel_word(26) and bench.novel_word(27).isalpha()


def test_heaps_law_fit_recovers_its_parameters():
    growth = np.floor(7.0 * np.arange(1, 100_001) ** 0.6)
    k, beta = bench.fit_heaps(growth)
    assert k == pytest.approx(7.0, rel=0.05) and beta == pytest.approx(0.6, abs=0.01)


def test_synthetic_input_is_reproducible_and_reused(data, tmp_path):
    first = bench.write_synthetic(tmp_path / "a", 50, data, seed=3, progress=False)
    second = bench.write_synthetic(tmp_path / "b", 50, data, seed=3, progress=False)
    assert gzip.open(first / "passages.jsonl.gz").read() == gzip.open(second / "passages.jsonl.gz").read()
    stamp = (first / "passages.jsonl.gz").stat().st_mtime_ns
    bench.write_synthetic(first, 50, data, seed=3, progress=False)
    assert (first / "passages.jsonl.gz").stat().st_mtime_ns == stamp


def test_merge_replaces_the_same_input(tmp_path):
    path = tmp_path / "results.json"
    bench.merge(path, {"input": "synthetic-10k", "wall_s": 1})
    bench.merge(path, {"input": "tira-input", "wall_s": 2})
    results = bench.merge(path, {"input": "synthetic-10k", "wall_s": 3})
    assert json.loads(path.read_text()) == results
    assert sorted((entry["input"], entry["wall_s"]) for entry in results) == [("synthetic-10k", 3), ("tira-input", 2)]


@pytest.mark.slow
def test_measure_reports_the_schema(data, tmp_path):
    target = bench.write_synthetic(tmp_path / "synthetic-200", 200, data, seed=1, progress=False)
    result = bench.measure(target, "synthetic-200", tmp_path / "out", "cpu", progress=False)
    assert {"input", "passages", "topics", "wall_s", "peak_rss_mb", "stages", "floor_s", "ratio", "device",
            "precision", "load_avg"} <= set(result)
    assert result["passages"] == 200 and result["topics"] == 1 and result["device"] == "cpu"
    assert {"corpus read", "index build", "first-stage retrieval", "dense encoding", "write"} <= set(result["stages"])
    assert result["ratio"] == pytest.approx(result["wall_s"] / result["floor_s"], rel=0.01)
    bench.plot([result], tmp_path / "results.png")
    assert (tmp_path / "results.png").read_bytes()[:4] == b"\x89PNG"


def test_args_me_input_states_each_arguments_stance_toward_a_key_point_of_its_motion(data, tmp_path):
    folder = data / "stance" / "ibm-argkp-2021"
    (folder / "kpm_data").mkdir(parents=True)
    (folder / "test_data").mkdir()
    motion = "We should ban whaling"
    for kind, rows in (("arguments", [("a1", "Whales are intelligent & endangered.", "1"),
                                      ("a2", "Whaling is a cultural tradition.", "-1")]),
                       ("key_points", [("k1", "Whales suffer", "1")])):
        header = "arg_id,argument,topic,stance" if kind == "arguments" else "key_point_id,key_point,topic,stance"
        for split, folder_name in (("train", "kpm_data"), ("dev", "kpm_data"), ("test", "test_data")):
            lines = [f'{name},"{text}",{motion},{stance}' for name, text, stance in rows]
            (folder / folder_name / f"{kind}_{split}.csv").write_text("\n".join([header] + lines) + "\n")
    target = bench.write_args_me(tmp_path / bench.ARGS_ME, data)
    documents = list(read_documents(detect_corpus(target)))
    assert [(d.doc_id, d.stance, d.stance_target) for d in documents[:2]] == [
        ("train-a1", "PRO", "Whales suffer"), ("train-a2", "CON", "Whales suffer")]  # a CON argument opposes it
    assert len(documents) == 6 and documents[-1].doc_id == "test-a2" and documents[0].text == "Whales suffer Whales are intelligent & endangered."
    from app.topics import read_topics

    assert [topic.title for topic in read_topics(target)] == [motion]
    assert bench.parse_size(bench.ARGS_ME) is None


def test_full_size_args_me_is_read_as_args_me_1_0_debates_stating_their_sides(data, tmp_path):
    (data / "touche-2020-task1").mkdir()
    (data / "touche-2020-task1" / "topics-task-1-2020.xml").write_text(
        "<topics><topic><number>1</number><title>Should teachers get tenure?</title></topic></topics>")
    target = bench.write_synthetic_args_me(tmp_path / bench.ARGS_ME_FULL, 300, data, seed=1, progress=False)
    documents = list(read_documents(detect_corpus(target)))
    assert len(documents) == 300 and len({d.doc_id for d in documents}) == 300
    debates = {}
    for document in documents:
        debates.setdefault(document.doc_id.split("-")[0], []).append(document)
    assert 300 / len(debates) == pytest.approx(bench.ARGS_ME_DEBATE_MEAN, rel=0.3)
    for arguments in debates.values():  # one conclusion a debate, the sides taking turns
        assert len({a.stance_target for a in arguments}) == 1 and 3 <= len(arguments[0].stance_target.split()) <= 12
        assert [a.stance for a in arguments] == [("PRO", "CON")[turn % 2] for turn in range(len(arguments))]
    arguments = json.loads((target / "args-me.json").read_text())["arguments"]
    second = next(i for i, argument in enumerate(arguments) if not argument["id"].endswith("-A00000000"))
    assert arguments[second]["context"]["previousArgumentInSourceId"] == arguments[second - 1]["id"]
    assert bench.parse_size(bench.ARGS_ME_FULL) is None
    written = (target / "args-me.json").stat().st_mtime_ns
    bench.write_synthetic_args_me(target, 300, data, seed=1, progress=False)  # reused
    assert (target / "args-me.json").stat().st_mtime_ns == written


def test_effectiveness_scores_each_rerank_depth_as_touche_evaluate_scores_such_a_run(data, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from app.cli import app
    from app.evaluate import evaluate_run
    from app.settings import MAX_SEQ_LENGTH

    task = data / "touche-2022-task2"
    (task / "tira-input" / "topics.xml").write_text(
        "<topics>" + "".join(f"<topic><number>{n}</number><title>{title}</title><objects>{objects}</objects></topic>"
                             for n, title, objects in (("1", "Python or Java for beginners?", "Python, Java"),
                                                       ("2", "Are cats or dogs better pets?", "cats, dogs"),
                                                       ("3", "Cats or dogs?", "cats, dogs"))) + "</topics>")
    (task / "dev-topics.txt").write_text("1,2\n")
    rng = np.random.default_rng(1)
    for name in ("relevance", "quality"):
        (task / f"touche-task2-2022-{name}-dev.qrels").write_text("".join(
            f"{qid} 0 p{i} {rng.integers(0, 3)}\n" for qid in "12" for i in range(0, 60, 2)))
    monkeypatch.setattr(bench, "BENCH", tmp_path / "bench")
    rows = bench.effectiveness(data, depths=(4, 60), lengths=(MAX_SEQ_LENGTH,), device="cpu")
    assert [row["rerank_depth"] for row in rows] == [4, 60]
    for row in rows:
        out = tmp_path / f"run-{row['rerank_depth']}"
        result = CliRunner().invoke(app, ["run", "-i", str(task / "tira-input"), "-o", str(out), "--quiet",
                                          "--rerank-depth", str(row["rerank_depth"]), "--no-stance",
                                          "--device", "cpu"])
        assert result.exit_code == 0, result.output
        for name in ("relevance", "quality"):
            mean = evaluate_run(out / "run.txt", task / f"touche-task2-2022-{name}-dev.qrels").mean
            assert row[f"{name} nDCG@5 judged-only"] == round(mean["relevance nDCG@5 judged-only"], 4)


def test_quiet_switches_the_libraries_bars_off_in_the_measured_children(data, tmp_path, monkeypatch):
    """--quiet left transformers' "Loading weights" bar in each child's log."""
    import os
    from types import SimpleNamespace

    for variable in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS"):
        monkeypatch.delenv(variable, raising=False)
    seen = []

    def measured(command, **options):
        seen.append((command, os.environ.get("TQDM_DISABLE"), os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS")))
        return SimpleNamespace(stdout=json.dumps({"input": "tira-input", "passages": 60, "wall_s": 1.0}) + "\n")

    monkeypatch.setattr(bench.subprocess, "run", measured)
    monkeypatch.setattr(bench, "plot", lambda results, path: None)
    bench.main(["--sizes", "tira-input", "--quiet", "--data", str(data), "--out", str(tmp_path / "out")])
    assert [(command[-1], tqdm, hub) for command, tqdm, hub in seen] == [("--quiet", "1", "1")]
