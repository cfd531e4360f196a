"""`touche report`: its numbers are `touche evaluate`'s, its statistics check out by hand, the page is one file."""

from __future__ import annotations

import base64
import json
import math
import sys
import warnings
from pathlib import Path

import lxml.html
import numpy as np
import pytest
from typer.testing import CliRunner

from app.cli import app
from app.errors import ToucheError
from app.evaluate import evaluate_run
from app.report import (bootstrap_interval, build_report, paired_t_test, randomization_test, stance_confusion,
                        write_report)

runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures" / "report"
RUNS = [FIXTURES / "bm25", FIXTURES / "rerank.txt", FIXTURES / "partial.txt"]  # bm25 is a directory with run.txt
QRELS = {"qrels": FIXTURES / "relevance.qrels", "quality_qrels": FIXTURES / "quality.qrels",
         "stance_qrels": FIXTURES / "stance.qrels"}
OPTIONS = [argument for name, path in QRELS.items() for argument in (f"--{name.replace('_', '-')}", str(path))]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> lxml.html.HtmlElement:
    output = tmp_path_factory.mktemp("report") / "report.html"
    result = runner.invoke(app, ["report", *map(str, RUNS), *OPTIONS, "-o", str(output)])
    assert result.exit_code == 0, result.output
    return lxml.html.fromstring(output.read_bytes())


def table(page: lxml.html.HtmlElement, table_id: str) -> list[list[str]]:
    """The table's body rows as cell texts."""
    return [[cell.text_content() for cell in row] for row in page.get_element_by_id(table_id).xpath("./tbody/tr")]


def values(page: lxml.html.HtmlElement, table_id: str) -> dict[str, list[float]]:
    """Each body row's exact numbers (`data-value`), keyed by its first cell."""
    rows = page.get_element_by_id(table_id).xpath("./tbody/tr")
    return {row[0].text_content(): [float(cell.get("data-value")) for cell in row[1:] if cell.get("data-value")]
            for row in rows}


def test_means_and_per_topic_scores_are_touche_evaluates(page):
    evaluations = [evaluate_run(run, **QRELS) for run in RUNS]
    means = values(page, "means")
    assert set(means) == set(evaluations[0].mean)
    for measure, row in means.items():
        assert row == [evaluation.mean[measure] for evaluation in evaluations]
    shown = {row[0]: row[1:] for row in table(page, "means")}
    assert shown["relevance nDCG@5 judged-only"] == [f"{e.mean['relevance nDCG@5 judged-only']:.4f}"
                                                     for e in evaluations]
    for measure in ("relevance nDCG@5 judged-only", "relevance nDCG@10 judged-only", "quality nDCG@5 judged-only"):
        per_topic = values(page, f"per-topic-{measure.replace(' ', '-').replace('@', '')}")
        assert list(per_topic) == ["1", "2", "3", "4", "5", "6"]
        for qid, row in per_topic.items():
            assert row == [evaluation.per_topic[qid][measure] for evaluation in evaluations]


def test_numbers_equal_the_evaluate_command_output(page):
    result = runner.invoke(app, ["evaluate", str(RUNS[2]), *OPTIONS, "--json", "--per-topic"])
    printed = json.loads(result.stdout)
    assert {measure: row[2] for measure, row in values(page, "means").items()} == printed["mean"]
    per_topic = values(page, "per-topic-relevance-nDCG5-judged-only")
    assert {qid: row[2] for qid, row in per_topic.items()} == {
        qid: scores["relevance nDCG@5 judged-only"] for qid, scores in printed["per_topic"].items()}
    # partial retrieves topics 1-4 only; 5 and 6 count 0, as in touche evaluate's mean
    assert per_topic["5"][2] == per_topic["6"][2] == 0.0
    assert table(page, "runs")[2][2] == "4 of 6"


def test_bootstrap_interval_contains_the_mean_and_is_deterministic(page):
    rows = page.get_element_by_id("intervals").xpath("./tbody/tr")
    for mean, low, high in ([float(cell.get("data-value")) for cell in row[2:]] for row in rows):
        assert low <= mean <= high
    assert len(rows) == 4 * 3  # relevance and quality nDCG@5/@10, three runs
    scores = [0.1, 0.5, 0.2, 0.9, 0.4, 0.7]
    interval = bootstrap_interval(scores)
    assert interval == bootstrap_interval(scores)
    assert interval[0] < sum(scores) / len(scores) < interval[1]
    assert bootstrap_interval([0.5] * 4) == pytest.approx((0.5, 0.5))
    evaluation = evaluate_run(RUNS[0], **QRELS)
    report = build_report(RUNS, **QRELS)
    assert report.runs[0].intervals["relevance nDCG@5 judged-only"] == bootstrap_interval(
        [evaluation.per_topic[qid]["relevance nDCG@5 judged-only"] for qid in "123456"])
    assert [run.intervals for run in build_report(RUNS, **QRELS).runs] == [run.intervals for run in report.runs]


def test_paired_tests_by_hand():
    baseline = [0.2, 0.4, 0.1, 0.5, 0.3, 0.6]
    assert paired_t_test(baseline, baseline) == 1.0
    assert randomization_test(baseline, baseline) == 1.0
    # better on all 6 topics: only the observed swap and its mirror are as extreme, exact p = 2 / 2^6
    better = [score + gain for score, gain in zip(baseline, [0.1, 0.3, 0.2, 0.1, 0.4, 0.2])]
    assert randomization_test(better, baseline) == pytest.approx(2 / 64)
    # differences 1, 2, 3: t = 2 / (1 / sqrt 3), 2 degrees of freedom, two-sided p = 1 - t / sqrt(2 + t^2)
    assert paired_t_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) == pytest.approx(1 - math.sqrt(6 / 7))
    assert paired_t_test([1.0, 1.0], [0.0, 0.0]) == 0.0


def test_runs_compared_on_one_topic_have_no_p_values(tmp_path):
    """scipy's randomization test refuses a single difference: two runs judged on one topic were an internal error
    of `touche report`."""
    assert math.isnan(randomization_test([0.5], [0.2])) and math.isnan(paired_t_test([0.5], [0.2]))
    qrels = tmp_path / "q"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run = tmp_path / "a.txt"
    run.write_text("1 Q0 d1 1 2 a\n1 Q0 d2 2 1 a\n")
    result = runner.invoke(app, ["report", str(run), str(run), "--qrels", str(qrels), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    rows = table(lxml.html.fromstring((tmp_path / "r.html").read_bytes()), "comparisons")
    assert rows and all(row[-2:] == ["–", "–"] for row in rows)  # t-test p, randomization p


def test_a_run_against_itself_differs_nowhere(caplog):
    report = build_report([RUNS[1], RUNS[1]], QRELS["qrels"])
    assert [run.name for run in report.runs] == ["rerank (1)", "rerank (2)"]
    assert f"the same run given more than once ({RUNS[1]}): compared with itself" in caplog.text  # was unsaid
    assert {(c.t_test_p, c.randomization_p, c.ties) for c in report.comparisons} == {(1.0, 1.0, 6)}
    assert report.differing == []


def test_comparisons_are_against_the_first_run(page):
    rows = {(row[0], row[1]): row for row in table(page, "comparisons")}
    assert {run for _, run in rows} == {"rerank", "partial"}
    rerank = rows[("relevance nDCG@5 judged-only", "rerank")]
    assert rerank[3] == "6 / 0 / 0"  # rerank is perfect on every topic, bm25 on none
    assert float(rerank[5]) == pytest.approx(2 / 64, abs=1e-4)
    assert "baseline" in page.text_content() and "bm25" in page.get_element_by_id("comparisons").text_content()


def test_stance_confusion_counts_by_hand(page):
    rerank = values(page, "confusion-1")
    # judged FIRST t1a t3a t3c t5a -> FIRST FIRST SECOND FIRST; SECOND t1b t2a t4b -> FIRST SECOND SECOND;
    # t6x is judged but retrieved by no run
    assert [cell.text_content() for cell in page.get_element_by_id("confusion-1").xpath("./thead/tr/th")] == [
        "judged \\ run", "FIRST", "NEUTRAL", "NO", "SECOND"]
    assert rerank == {"FIRST": [3, 0, 0, 1], "NEUTRAL": [0, 2, 0, 0], "NO": [0, 0, 2, 0], "SECOND": [1, 0, 0, 2]}
    bm25 = values(page, "confusion-0")  # Q0 everywhere: an extra column
    assert bm25 == {"FIRST": [0, 0, 0, 0, 4], "NEUTRAL": [0, 0, 0, 0, 2], "NO": [0, 0, 0, 0, 2],
                    "SECOND": [0, 0, 0, 0, 3]}
    assert sum(map(sum, bm25.values())) == evaluate_run(RUNS[0], **QRELS).mean["stance judged documents"]
    confusion = stance_confusion({("1", "a"): "PRO"}, {("1", "a"): "CON", ("1", "b"): "PRO"})
    assert (confusion.judged, confusion.labels, confusion.counts) == (["CON", "PRO"], ["CON", "PRO"], [[0, 1], [0, 0]])


def test_topics_that_differ_most(page):
    rows = values(page, "differing")
    spreads = [row[-1] for row in rows.values()]
    assert spreads == sorted(spreads, reverse=True)
    assert list(rows)[:2] == ["5", "6"]  # partial has nothing there, rerank is perfect
    for row in rows.values():
        assert row[-1] == pytest.approx(max(row[:-1]) - min(row[:-1]))


def test_page_is_self_contained_with_title_inputs_and_figures(page):
    assert page.find(".//title").text == "touche report: bm25 vs rerank vs partial"
    assert not page.xpath("//script") and not page.xpath("//@*[starts-with(name(), 'on')]")
    images = page.xpath("//img/@src")
    assert len(images) == 3  # means, per-topic relevance, per-topic quality
    for source in images:
        assert source.startswith("data:image/png;base64,")
        assert base64.b64decode(source.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")
    inputs = page.get_element_by_id("qrels").text_content() + page.get_element_by_id("runs").text_content()
    assert all(str(path) in inputs for path in [*RUNS, *QRELS.values()])


def test_names_are_escaped(tmp_path):
    output = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(RUNS[0]), str(RUNS[1]), "--qrels", str(QRELS["qrels"]),
                                 "--names", "<b>base</b>,r&d", "-o", str(output)])
    assert result.exit_code == 0, result.output
    markup = output.read_text()
    assert "<b>base</b>" not in markup and "&lt;b&gt;base&lt;/b&gt;" in markup and "r&amp;d" in markup
    page = lxml.html.fromstring(markup)
    assert not page.xpath("//b") and [row[0] for row in table(page, "runs")] == ["<b>base</b>", "r&d"]
    assert not page.xpath("//*[starts-with(@id, 'confusion')]")  # no stance qrels, no stance section


def test_names_are_read_as_names_and_bidi_controls_turn_nothing_around(tmp_path):
    """A right-to-left override in a name mirrored the rest of its line on the page ("0.7708" read "8077.0"); a
    zero-width space was a name, a tab stayed in one; one clash numbered every run."""
    from app.report import render_html, run_names

    assert run_names(RUNS[:2], ["a\u200b", "b\tc"]) == ["a", "b c"]
    with pytest.raises(ToucheError, match="--names must be distinct and non-empty"):
        run_names(RUNS[:2], ["a", "a\u200b"])
    assert run_names([RUNS[1], RUNS[2], RUNS[1]], None) == ["rerank (1)", "partial", "rerank (3)"]
    report = build_report(RUNS[:2], QRELS["qrels"], names=["base\u202e", "_rr \U0001f600\u6587\u200f"])
    with warnings.catch_warnings(record=True) as caught:  # a glyph the font lacks: multi-line warnings on stderr
        warnings.simplefilter("always")
        markup = render_html(report)
    # An override and a right-to-left mark go as names are cleaned (`records.clean_text`).
    assert "\u202e" not in markup and "\u200f" not in markup and "_rr \U0001f600\u6587<" in markup and not caught


@pytest.mark.parametrize("runs", [2, 12, 25])
def test_every_run_has_its_own_colour_and_a_place_in_the_legend(runs):
    """C10 was C0 again, a legend of 20 was cut after 16, and a name opening with "_" had no legend entry."""
    from matplotlib.colors import to_hex

    from app.report import _colour, _legend, _new_figure

    assert len({to_hex(_colour(index, runs)) for index in range(runs)}) == runs
    axes = _new_figure(6, 3.6).add_subplot()
    for index in range(runs):
        axes.bar([index], [1], label=" _r" if index == 0 else f"r{index}")
    _legend(axes, runs)
    assert len(axes.get_legend().get_texts()) == runs


def test_names_and_topics_with_dollar_signs_are_drawn_as_written(tmp_path):
    """matplotlib read `x$_$` as math: the report ended in an internal error (a ParseSyntaxException)."""
    run = tmp_path / "price$_$.txt"
    run.write_text("".join(line.replace("1 ", "t$_$ ", 1) if line.startswith("1 ") else line
                           for line in (RUNS[1]).read_text().splitlines(keepends=True)))
    qrels = tmp_path / "q"
    qrels.write_text("".join(line.replace("1 ", "t$_$ ", 1) if line.startswith("1 ") else line
                             for line in QRELS["qrels"].read_text().splitlines(keepends=True)))
    result = runner.invoke(app, ["report", str(RUNS[0]), str(run), "--qrels", str(qrels), "--names", "x$_$,y$a$",
                                 "-o", str(tmp_path / "report.html")])
    assert result.exit_code == 0, result.output
    assert [row[0] for row in table(lxml.html.fromstring((tmp_path / "report.html").read_bytes()), "runs")] == [
        "x$_$", "y$a$"]


@pytest.mark.parametrize("arguments, message", [
    (["--qrels", "missing.qrels"], "missing.qrels"),
    (["--qrels", str(QRELS["qrels"]), "--names", "a"], "--names has 1 names for 2 runs"),
    (["--qrels", str(QRELS["qrels"]), "--stance-qrels", str(RUNS[1])], "not a stance qrels file"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, arguments, message):
    output = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(RUNS[0]), str(RUNS[1]), *arguments, "-o", str(output)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("touche: error:") and message in lines[0], result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", ["run", "qrels", "run directory", "link", "beside a run"])
def test_a_report_never_replaces_its_input(tmp_path, target):
    """`-o run.txt` replaced the run with the page, exit 0; `-o` naming the qrels lost them the same way."""
    import shutil

    run_dir = tmp_path / "out"
    run_dir.mkdir()
    shutil.copy(RUNS[0] / "run.txt", run_dir / "run.txt")
    qrels = tmp_path / "q.qrels"
    shutil.copy(QRELS["qrels"], qrels)
    (tmp_path / "link.html").symlink_to(run_dir / "run.txt")
    output = {"run": run_dir / "run.txt", "qrels": qrels, "run directory": run_dir / "run.txt",
              "link": tmp_path / "link.html", "beside a run": run_dir / "run.txt.gz"}[target]  # a second run file
    before = output.read_bytes() if output.exists() else None
    inputs = [str(run_dir if target == "run directory" else run_dir / "run.txt"), str(RUNS[1])]
    result = runner.invoke(app, ["report", *inputs, "--qrels", str(qrels), "-o", str(output)])
    said = "would be a second run file beside the run" if target == "beside a run" else "would replace its input"
    assert result.exit_code == 1 and said in result.stderr, result.stderr
    assert (output.read_bytes() if output.exists() else None) == before


def test_a_directory_as_output_gets_report_html(tmp_path):
    """`-o reports/` wrote a file named "reports"."""
    (tmp_path / "existing").mkdir()
    for given, written in ((f"{tmp_path}/reports/", tmp_path / "reports" / "report.html"),
                           (str(tmp_path / "existing"), tmp_path / "existing" / "report.html")):
        result = runner.invoke(app, ["report", str(RUNS[0]), "--qrels", str(QRELS["qrels"]), "-o", given])
        assert result.exit_code == 0 and f"wrote {written}:" in result.stderr, result.stderr
        assert written.read_text().startswith("<!DOCTYPE html>")


def test_unjudged_runs_and_runs_without_common_topics_are_errors(tmp_path):
    unjudged = tmp_path / "unjudged.txt"
    unjudged.write_text("99 Q0 t1a 1 1.0 x\n")
    with pytest.raises(ToucheError, match="none of its topics is judged"):
        build_report([RUNS[1], unjudged], QRELS["qrels"])
    first, last = tmp_path / "first.txt", tmp_path / "last.txt"
    first.write_text("1 Q0 t1a 1 1.0 x\n2 Q0 t2a 1 1.0 x\n")
    last.write_text("5 Q0 t5a 1 1.0 x\n6 Q0 t6a 1 1.0 x\n")
    with pytest.raises(ToucheError, match="no judged topic in common"):
        build_report([first, last], QRELS["qrels"])
    with pytest.raises(ToucheError, match="missing.txt: no such file or directory"):
        build_report([tmp_path / "missing.txt"], QRELS["qrels"])
    (tmp_path / "empty.qrels").write_text("")
    for qrels, quality in ((QRELS["qrels"], tmp_path / "empty.qrels"), (tmp_path / "empty.qrels", None)):
        with pytest.raises(ToucheError, match=r"empty.qrels: holds no judgements$"):
            build_report([RUNS[1]], qrels, quality_qrels=quality)


def test_write_report_replaces_atomically(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("old")
    monkeypatch.setattr("app.files.os.replace", lambda *_: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(ToucheError, match="cannot write .*disk full"):
        write_report("<html>new</html>", target)
    assert target.read_text() == "old" and list(tmp_path.iterdir()) == [target]
    monkeypatch.undo()
    write_report("<html>new</html>", target)
    assert target.read_text() == "<html>new</html>" and list(tmp_path.iterdir()) == [target]
    (tmp_path / "file").write_text("")
    with pytest.raises(ToucheError, match="file is a file, not a directory"):
        write_report("<html></html>", tmp_path / "file" / "report.html")


def test_names_that_are_no_utf8_are_shown_with_replacement_characters(tmp_path):
    """A run file named with a Latin-1 byte (Python's lone surrogate) was an internal error from the plots."""
    run = tmp_path / "fake\udcfc.run"
    run.write_bytes(RUNS[1].read_bytes())
    output = tmp_path / "report.html"
    qrels = tmp_path / "q\udcfc.qrels"
    qrels.write_bytes(QRELS["qrels"].read_bytes())
    for extra in ([], ["--names", "r\udcfcn"]):
        result = runner.invoke(app, ["report", str(run), "--qrels", str(qrels), "-o", str(output), *extra])
        assert result.exit_code == 0, result.output
        page = output.read_text(encoding="utf-8")
        assert ("r\ufffdn" if extra else "fake\ufffd") in page and "q\ufffd.qrels" in page


def test_a_page_written_to_a_pipe_or_a_link_leaves_them_what_they_are(tmp_path):
    """The rename replaced a pipe, a device or a link with a file: `-o /dev/null` as root replaced /dev/null."""
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    read = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()), daemon=True)
    reader.start()
    write_report("<html>piped</html>", fifo)
    reader.join(timeout=10)
    assert read == ["<html>piped</html>"] and fifo.is_fifo()
    target, link = tmp_path / "pages" / "target.html", tmp_path / "link.html"
    target.parent.mkdir()
    target.write_text("old")
    link.symlink_to(target)
    write_report("<html>new</html>", link)
    assert link.is_symlink() and target.read_text() == "<html>new</html>"
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    with pytest.raises(ToucheError, match="a symbolic link loop"):
        write_report("<html>looped</html>", loop)
    assert loop.is_symlink()


def test_a_page_written_to_dev_stdout_reaches_a_pipe():
    """/dev/stdout leads to a pipe's /proc entry, which no file can be renamed onto: the report failed."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "report", str(RUNS[1]),
                           "--qrels", str(QRELS["qrels"]), "-o", "/dev/stdout"], capture_output=True, timeout=300,
                          cwd=Path(__file__).parents[1])
    assert done.returncode == 0 and done.stdout.startswith(b"<!DOCTYPE html>"), done.stderr


def test_many_topics_are_resampled_in_bounded_memory_and_listed_without_bars(tmp_path, monkeypatch):
    """100,000 topics asked for 7.45 GB of resampled indices at once; 20,000 took 2 min 45 s of bar layout."""
    import app.report as report

    values_ = np.random.default_rng(1).random(60)
    whole = bootstrap_interval(values_), randomization_test(values_, values_[::-1])
    monkeypatch.setattr(report, "RESAMPLED_TOPICS_AT_ONCE", 500)  # 8 resamples a draw: the same draws
    assert (bootstrap_interval(values_), randomization_test(values_, values_[::-1])) == whole
    monkeypatch.setattr(report, "MAX_PLOTTED_TOPICS", 2)
    output = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(RUNS[0]), str(RUNS[1]), "--qrels", str(QRELS["qrels"]),
                                 "-o", str(output)])
    assert result.exit_code == 0, result.output
    page = lxml.html.fromstring(output.read_bytes())
    assert "per-topic bars are drawn for at most 2" in page.text_content()
    assert len(page.xpath("//img")) == 1  # the means' figure alone


def test_an_output_that_cannot_be_written_is_said_before_the_work_and_leaves_no_directories(tmp_path, monkeypatch):
    """A read-only -o was said after all the scoring (18 s for 20 runs); a full disk left the directories made."""
    import os

    from app.report import check_output

    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(ToucheError, match=rf"cannot write .*report.html: {tmp_path} is not writable"):
        check_output(tmp_path / "new" / "report.html", [RUNS[1]])
    monkeypatch.undo()
    monkeypatch.setattr("app.files.os.replace", lambda *_: (_ for _ in ()).throw(OSError(28, "No space left")))
    with pytest.raises(ToucheError, match="cannot write"):
        write_report("<html></html>", tmp_path / "a" / "b" / "report.html")
    assert list(tmp_path.iterdir()) == []


def test_a_qrels_warning_is_said_once_not_for_every_run(tmp_path, caplog):
    quality = tmp_path / "q13.qrels"
    quality.write_text(QRELS["quality_qrels"].read_text() + "13 0 x 1\n")  # a topic the relevance qrels lack
    build_report(RUNS, QRELS["qrels"], quality)
    assert caplog.text.count("1 topic not judged in relevance.qrels left out") == 1


def test_captions_count_the_topics_each_mean_is_over(tmp_path):
    """"Means over the 7 judged topics" where the quality means were over 3."""
    from app.report import render_html

    quality = tmp_path / "q.qrels"
    quality.write_text("".join(line for line in QRELS["quality_qrels"].read_text().splitlines(keepends=True)
                               if line.split()[0] == "1"))
    report = build_report(RUNS[:2], QRELS["qrels"], quality)
    caption = lxml.html.fromstring(render_html(report)).get_element_by_id("means").find("caption").text_content()
    assert caption == f"Means over the {len(report.topics)} judged topics (quality: the 1 of them its qrels judge)"
