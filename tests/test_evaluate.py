import pytest

from app.errors import ToucheError
from app.evaluate import evaluate_run

QRELS = ["1 0 a 2", "1 0 b 0", "1 0 c -2", "2 0 x 1", "2 0 y 2"]
RUN = ["1 NO u 1 3.0 t", "1 FIRST a 2 2.0 t", "1 SECOND b 3 1.0 t", "1 NO c 4 0.5 t",
       "2 NEUTRAL y 1 2.0 t", "2 FIRST x 2 1.0 t"]
STANCE = ["1 0 a FIRST", "1 0 b FIRST", "2 0 y NEUTRAL", "2 0 x SECOND"]


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ndcg_judged_only_and_standard_with_spam_as_zero(tmp_path):
    result = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS))
    topic1 = result.per_topic["1"]
    assert topic1["relevance nDCG@5 judged-only"] == pytest.approx(1.0)  # unjudged u is dropped
    assert topic1["relevance nDCG@5"] < 1.0  # trec_eval counts u as non-relevant
    assert result.per_topic["2"]["relevance nDCG@5"] == pytest.approx(1.0)
    assert result.mean["relevance nDCG@5 judged-only"] == pytest.approx(1.0)


def test_stance_macro_f1_over_judged_documents(tmp_path):
    result = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS),
                          stance_qrels=write(tmp_path, "s", STANCE))
    # truth FIRST, FIRST, NEUTRAL, SECOND vs predicted FIRST, SECOND, NEUTRAL, FIRST
    assert result.mean["stance judged documents"] == 4
    # F1: FIRST 1/2 (one hit, one false, one missed), NEUTRAL 1, SECOND 0
    assert result.mean["stance macro-F1"] == pytest.approx(0.5)


def test_stance_labels_of_another_task_are_an_error_not_a_score_of_zero(tmp_path):
    controversial = [line.replace("FIRST", "PRO").replace("SECOND", "CON").replace("NEUTRAL", "NEU") for line in RUN]
    # NO is a label of both tasks: the run's other labels tell its task, with NO among them or not.
    for run in (controversial, [line.replace(" NO ", " PRO ") for line in controversial]):
        with pytest.raises(ToucheError, match=r"its stance labels \(CON, NEU, PRO\) are none of those in .*"
                                              r"\(FIRST, NEUTRAL, SECOND\); a run of another task\?"):
            evaluate_run(write(tmp_path, "run.txt", run), write(tmp_path, "q", QRELS),
                         stance_qrels=write(tmp_path, "s", STANCE + ["1 0 c NO"]))
    # A run without stance (Q0 everywhere) or sharing one label with the judgements is scored as it is.
    unlabelled = [" ".join([line.split()[0], "Q0", *line.split()[2:]]) for line in RUN]
    assert evaluate_run(write(tmp_path, "run.txt", unlabelled), write(tmp_path, "q", QRELS),
                        stance_qrels=write(tmp_path, "s", STANCE)).mean["stance macro-F1"] == 0.0
    mixed = evaluate_run(write(tmp_path, "run.txt", [line.replace("FIRST", "PRO") for line in RUN]),
                         write(tmp_path, "q", QRELS), stance_qrels=write(tmp_path, "s", STANCE))
    assert 0.0 < mixed.mean["stance macro-F1"] < 0.5


def test_a_run_of_the_same_task_is_scored_whichever_labels_it_uses(tmp_path):
    """Only labels of the other task make a run "of another task": a comparative run labelling FIRST only against
    judgements of SECOND and NEUTRAL was refused, and lost its nDCG with it."""
    qrels = write(tmp_path, "q", QRELS)
    for label, judged in (("FIRST", ["1 0 a SECOND", "1 0 b NEUTRAL"]), ("NEUTRAL", ["1 0 a FIRST", "1 0 b SECOND"]),
                          ("CON", ["1 0 a PRO", "1 0 b NEU"])):
        run = write(tmp_path, "run.txt", [f"1 {label} a 1 2.0 t", f"1 {label} b 2 1.0 t"])
        result = evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s", judged))
        assert result.mean["stance macro-F1"] == 0.0 and result.mean["stance judged documents"] == 2


def test_stance_macro_f1_averages_every_label_the_judgements_use(tmp_path):
    """As Touché's evaluation averages it: a judged label the run never predicts rightly counts 0, also where the
    run ranks none of its documents (CON here), and a topic's own macro-F1 averages its own judged labels."""
    run = write(tmp_path, "run.txt", ["1 PRO a 1 3.0 t", "1 PRO u 2 2.0 t", "2 PRO x 1 1.0 t"])
    stance = write(tmp_path, "s", ["1 0 a PRO", "1 0 b CON", "2 0 x PRO"])
    result = evaluate_run(run, write(tmp_path, "q", QRELS), stance_qrels=stance)
    assert result.mean["stance macro-F1"] == pytest.approx(0.5)  # PRO 1, CON 0
    assert result.per_topic["1"]["stance macro-F1"] == pytest.approx(0.5)
    assert result.per_topic["2"]["stance macro-F1"] == pytest.approx(1.0)


def test_a_run_without_stance_is_said_to_label_none(tmp_path, caplog):
    unlabelled = [" ".join([line.split()[0], "Q0", *line.split()[2:]]) for line in RUN]
    evaluate_run(write(tmp_path, "run.txt", unlabelled), write(tmp_path, "q", QRELS),
                 stance_qrels=write(tmp_path, "s", STANCE))
    assert "run.txt: labels no stance (Q0) on the documents s judges: its stance macro-F1 is 0" in caplog.text


def test_a_document_ranked_twice_counts_once_by_its_best_line_and_is_said(tmp_path, caplog):
    """`touche validate` rejects such a run; evaluate kept the last line silently, Touché's evaluation the best."""
    twice = write(tmp_path, "run.txt", ["1 PRO a 1 3.0 t", "1 CON b 2 2.0 t", "1 PRO b 3 1.0 t", "1 NO b 4 2.0 t"])
    stance = write(tmp_path, "s", ["1 0 a PRO", "1 0 b CON"])
    result = evaluate_run(twice, write(tmp_path, "q", ["1 0 a 0", "1 0 b 1"]), stance_qrels=stance)
    once = evaluate_run(write(tmp_path, "once.txt", ["1 PRO a 1 3.0 t", "1 CON b 2 2.0 t"]), tmp_path / "q",
                        stance_qrels=stance)
    assert result.mean == once.mean
    assert "run.txt: 1 document ranked more than once in a topic (e.g. b for topic 1); each counts once" in caplog.text


def test_of_a_documents_lines_of_equal_score_the_better_rank_counts(tmp_path):
    """As Touché's evaluation sorts them (from review: the first line in the file counted)."""
    stance = write(tmp_path, "s", ["1 0 a CON", "1 0 b PRO"])
    result = evaluate_run(write(tmp_path, "run.txt", ["1 PRO b 1 3.0 t", "1 PRO a 5 2.0 t", "1 CON a 3 2.0 t"]),
                          write(tmp_path, "q", ["1 0 a 1", "1 0 b 1"]), stance_qrels=stance)
    assert result.mean["stance macro-F1"] == 1.0


def test_a_score_trec_eval_reads_otherwise_is_an_error(tmp_path):
    """float() reads "1_0" as 10 and "９" as 9; trec_eval reads 1 and 0, and `touche validate` calls them errors."""
    for score in ("1_0", "\uff19"):
        with pytest.raises(ToucheError, match=f"score '{score}' of a for topic 1 is not a number as trec_eval"):
            evaluate_run(write(tmp_path, "run.txt", [f"1 Q0 a 1 {score} t", "1 Q0 b 2 0.5 t"]),
                         write(tmp_path, "q", QRELS))


def test_quality_is_averaged_over_the_topics_relevance_judges(tmp_path, caplog):
    """Touché averages both over the same topics: a quality-only topic was in the quality mean (and not in the
    report's per-topic tables beside it)."""
    run = write(tmp_path, "run.txt", RUN + ["3 Q0 z 1 1.0 t"])
    quality = write(tmp_path, "qq", ["1 0 a 0", "1 0 b 2", "2 0 x 2", "2 0 y 0"])
    with_third = write(tmp_path, "qq3", ["1 0 a 0", "1 0 b 2", "2 0 x 2", "2 0 y 0", "3 0 w 1"])
    assert (evaluate_run(run, write(tmp_path, "q", QRELS), with_third).mean
            == evaluate_run(run, tmp_path / "q", quality).mean)
    assert "qq3: 1 topic not judged in q left out (e.g. topic 3)" in caplog.text


def test_stance_is_scored_on_the_topics_relevance_judges(tmp_path, caplog):
    """As quality is, and as Touché's evaluation scores it (from review: a stance-only topic counted)."""
    run, qrels = write(tmp_path, "run.txt", RUN + ["3 FIRST z 1 1.0 t"]), write(tmp_path, "q", QRELS)
    alone = evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s", STANCE))
    with_third = evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s3", STANCE + ["3 0 z SECOND"]))
    assert with_third.mean == alone.mean
    assert "s3: 1 topic not judged in q left out (e.g. topic 3)" in caplog.text


def test_a_label_only_a_left_out_topic_uses_still_counts_in_the_macro_f1(tmp_path):
    """As Touché's evaluation averages it, over every label the stance qrels use (a helper's attack: 3 labels
    where the organizers' evaluator counted 4)."""
    run, qrels = write(tmp_path, "run.txt", RUN + ["3 NO z 1 1.0 t"]), write(tmp_path, "q", QRELS)
    alone = evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s", STANCE)).mean["stance macro-F1"]
    with_no = evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s3", STANCE + ["3 0 z NO"]))
    assert with_no.mean["stance macro-F1"] == pytest.approx(alone * 3 / 4)


def test_a_score_that_is_no_number_is_said_with_its_document(tmp_path):
    with pytest.raises(ToucheError, match="score 'abc' of b for topic 1 is not a number"):
        evaluate_run(write(tmp_path, "run.txt", ["1 Q0 a 1 1.0 t", "1 Q0 b 2 abc t"]), write(tmp_path, "q", QRELS))


def test_q0_in_small_letters_labels_no_stance(tmp_path, caplog):
    """TIRA accepts it and trec_eval ignores the column; it was "a run of another task?"."""
    run = write(tmp_path, "run.txt", [line.replace(line.split()[1], "q0", 1) for line in RUN])
    result = evaluate_run(run, write(tmp_path, "q", QRELS), stance_qrels=write(tmp_path, "s", STANCE))
    assert result.mean["stance macro-F1"] == 0.0 and "labels no stance (Q0)" in caplog.text


def test_a_run_that_cannot_be_read_is_said_so_not_malformed(tmp_path, monkeypatch):
    import errno

    import app.evaluate

    def denied(path):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(app.evaluate, "open_run", denied)
    with pytest.raises(ToucheError, match=r"run\.txt: permission denied$"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS))


def test_quality_qrels_are_scored_separately(tmp_path):
    quality = write(tmp_path, "qq", ["1 0 a 0", "1 0 b 2", "2 0 x 2", "2 0 y 0"])
    result = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS), quality)
    assert result.mean["quality nDCG@5 judged-only"] < result.mean["relevance nDCG@5 judged-only"]


def test_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(ToucheError, match="6-column"):
        evaluate_run(write(tmp_path, "run.txt", ["1 Q0 a"]), write(tmp_path, "q", QRELS))
    with pytest.raises(ToucheError, match="stance qrels"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS),
                     stance_qrels=write(tmp_path, "s", ["1 0 a"]))
    (tmp_path / "cut.txt.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage, not deflate")
    with pytest.raises(ToucheError, match="not a 6-column TREC run"):
        evaluate_run(tmp_path / "cut.txt.gz", write(tmp_path, "q", QRELS))
    with pytest.raises(ToucheError, match="score nan of a for topic 1 is no finite number"):
        evaluate_run(write(tmp_path, "run.txt", [RUN[0], "1 FIRST a 2 nan t", *RUN[2:]]), write(tmp_path, "q", QRELS))
    with pytest.raises(ToucheError, match="an empty run"):
        evaluate_run(write(tmp_path, "run.txt", [""]), write(tmp_path, "q", QRELS))
    with pytest.raises(ToucheError, match="none of its topics is judged in .*q$"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["3 0 a 1"]))
    with pytest.raises(ToucheError, match=r"none of its topics is judged in .*q \(their topic numbers differ by "
                                          r"leading zeros: '001' is not '1'\)$"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["001 0 a 1"]))
    for empty in ([""], ["", "  "]):  # was "none of its topics is judged", the run's fault
        with pytest.raises(ToucheError, match=r"q: holds no judgements$"):
            evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", empty))
    with pytest.raises(ToucheError, match="grade 99999999999999999999 of topic 1 is beyond"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["1 0 a 99999999999999999999"]))
    # trec_eval's nDCG takes memory for each grade up to the highest: 2**31 - 1 took 16 GB and hung in C
    with pytest.raises(ToucheError, match="grade 2147483647 of topic 1 is beyond 1000"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["1 0 a 2147483647"]))
    assert evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["1 0 a 1000"])).mean


def test_a_grade_trec_eval_reads_otherwise_is_an_error(tmp_path):
    """int() read "1_0" as 10 and "３" as 3, where trec_eval reads 1 and 0: another nDCG, silently."""
    for grade in ("1_0", "\uff13", "1.5"):
        with pytest.raises(ToucheError, match=rf"q: not a TREC qrels file \(line 2: grade '{grade}' is not an "
                                              r"integer as trec_eval reads it\)"):
            evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", [QRELS[0], f"1 0 b {grade}"]))
    assert evaluate_run(tmp_path / "run.txt", write(tmp_path, "q", ["1 0 a +1", "1 0 b -2"])).mean


def test_qrels_with_a_bom_judge_their_first_topic(tmp_path):
    """With a BOM the first topic was "\ufeff1": silently unjudged."""
    plain = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS),
                         stance_qrels=write(tmp_path, "s", STANCE))
    (tmp_path / "qb").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "q").read_bytes())
    (tmp_path / "sb").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "s").read_bytes())
    assert evaluate_run(tmp_path / "run.txt", tmp_path / "qb", stance_qrels=tmp_path / "sb").mean == plain.mean


def test_qrels_joined_by_cat_of_files_saved_with_a_bom_judge_every_topic(tmp_path):
    """The BOM that opened the second file made its first topic "\ufeff2" and took the judgement away from topic 2
    (nDCG 1.0 -> 0.5, unsaid)."""
    plain = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS),
                         stance_qrels=write(tmp_path, "s", STANCE))
    marked = [line if line[0] == "1" or i % 2 else "\ufeff" + line for i, line in enumerate(QRELS)]
    stances = [line if line[0] == "1" else "\ufeff" + line for line in STANCE]
    joined = evaluate_run(tmp_path / "run.txt", write(tmp_path, "qb", marked),
                          stance_qrels=write(tmp_path, "sb", stances))
    assert joined.mean == plain.mean and joined.stance_truth == plain.stance_truth


def test_a_judgement_of_no_stance_label_among_stance_labels_is_said(tmp_path, caplog):
    """'second' or 'NO' with a zero-width space was a class of its own: macro-F1 1.0 -> 0.73, unsaid."""
    run = write(tmp_path, "run.txt", RUN)
    evaluate_run(run, write(tmp_path, "q", QRELS), stance_qrels=write(tmp_path, "s", STANCE))
    assert "no stance label" not in caplog.text
    evaluate_run(run, tmp_path / "q", stance_qrels=write(tmp_path, "s2", [*STANCE[:3], "2 0 x second"]))
    assert "1 judgement of no stance label (e.g. 'second' for x in topic 2)" in caplog.text


def test_a_run_or_qrels_in_utf16_is_said_so(tmp_path):
    """It was "not a TREC qrels file ('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"."""
    (tmp_path / "q16").write_text("\n".join(QRELS) + "\n", encoding="utf-16")
    with pytest.raises(ToucheError, match=r"q16: UTF-16 text \(its byte order mark says so\), not UTF-8: save it as"):
        evaluate_run(write(tmp_path, "run.txt", RUN), tmp_path / "q16")
    (tmp_path / "r16").write_text("\n".join(RUN) + "\n", encoding="utf-16")
    with pytest.raises(ToucheError, match=r"r16: UTF-16 text \(its byte order mark says so\), not UTF-8: save it as"):
        evaluate_run(tmp_path / "r16", write(tmp_path, "q", QRELS))


def test_a_gzipped_run_in_an_output_directory_is_read(tmp_path):
    import gzip

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.txt.gz").write_bytes(gzip.compress(("\n".join(RUN) + "\n").encode()))
    plain = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS))
    assert evaluate_run(tmp_path / "out", tmp_path / "q").mean == plain.mean


def test_gzipped_qrels_are_read_and_a_missing_one_is_named(tmp_path):
    import gzip

    plain = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS),
                         stance_qrels=write(tmp_path, "s", STANCE))
    for name in ("q", "s"):
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress((tmp_path / name).read_bytes()))
    assert evaluate_run(tmp_path / "run.txt", tmp_path / "q.gz", stance_qrels=tmp_path / "s.gz").mean == plain.mean
    with pytest.raises(ToucheError, match=r"absent.qrels: no such file or directory$"):
        evaluate_run(tmp_path / "run.txt", tmp_path / "absent.qrels")


def test_a_document_judged_twice_differently_keeps_its_last_grade_and_is_said(tmp_path, caplog):
    """The score depends on which judgement counts: trec_eval keeps the last, and so does evaluate, saying so."""
    last = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["1 0 a 0", *QRELS[1:]]))
    twice = evaluate_run(tmp_path / "run.txt", write(tmp_path, "q2", [QRELS[0], "1 0 a 0", *QRELS[1:]]))
    assert twice.mean == last.mean
    assert "q2: 1 document judged twice, differently (e.g. a for topic 1); the last judgement counts" in caplog.text
    caplog.clear()
    evaluate_run(tmp_path / "run.txt", write(tmp_path, "q3", QRELS + QRELS[:1]))  # the same grade again: silent
    assert "judged twice" not in caplog.text


def test_a_run_with_a_bom_is_scored_as_trec_eval_scores_it_and_said(tmp_path, caplog):
    """trec_eval reads "\ufeff1" as another topic, which no qrels judge: the score is the official one, and the
    warning says why it is low (it said nothing)."""
    (tmp_path / "run.txt").write_bytes(b"\xef\xbb\xbf" + "\n".join(RUN).encode() + b"\n")
    evaluate_run(tmp_path / "run.txt", write(tmp_path, "q", QRELS))
    assert "a byte order mark (U+FEFF) before topic '1' makes it another topic" in caplog.text
    caplog.clear()  # one opening a line further down (runs joined by `cat`), which was scored so unsaid
    evaluate_run(write(tmp_path, "run2.txt", [*RUN[:4], "\ufeff" + RUN[4], RUN[5]]), tmp_path / "q")
    assert "a byte order mark (U+FEFF) before topic '2' makes it another topic" in caplog.text


def test_other_whitespace_between_columns_is_scored_as_split_and_said(tmp_path, caplog):
    """`touche validate` warns of it, trec_eval reads it as part of a column; evaluate scored it as if clean, unsaid."""
    clean = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS))
    assert "U+" not in caplog.text
    spaced = [RUN[0], RUN[1], RUN[2].replace(" ", "\u00a0", 1), "\x1c".join(RUN[3].split()), *RUN[4:]]
    assert evaluate_run(write(tmp_path, "run2.txt", spaced), tmp_path / "q") == clean
    assert ("run2.txt: U+00A0 between or before columns (line 3), which trec_eval reads as part of a column; scored as "
            "Touché's evaluation (Python) reads it, split there") in caplog.text
    caplog.clear()  # after the last column: the tag, which trec_eval does not read
    evaluate_run(write(tmp_path, "run3.txt", [line + "\u00a0" for line in RUN]), tmp_path / "q")
    assert "U+" not in caplog.text
    evaluate_run(write(tmp_path, "run4.txt", [*RUN, "\u00a0"]), tmp_path / "q")  # a line of one: no blank line
    assert "U+00A0 between or before columns (line 7)" in caplog.text


def test_stance_qrels_of_other_topics_are_an_error_not_a_score_of_zero(tmp_path):
    run, qrels = write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS)
    with pytest.raises(ToucheError, match="none of its topics is judged in"):
        evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s", []))
    # judged, but on none of the relevance qrels' topics, on which stance is scored
    with pytest.raises(ToucheError, match=r"s: judges none of the topics .*q judges$"):
        evaluate_run(write(tmp_path, "run7.txt", RUN + ["7 FIRST a 1 1.0 t"]), qrels,
                     stance_qrels=write(tmp_path, "s", ["7 0 a FIRST"]))


def test_an_endless_qrels_line_is_an_error_not_all_the_memory(tmp_path):
    (tmp_path / "q").write_text("1 0 a " + "9" * 200_000 + "\n")
    for option in ("qrels", "stance_qrels"):
        arguments = {"qrels": tmp_path / "q"} if option == "qrels" else {
            "qrels": write(tmp_path, "good", QRELS), "stance_qrels": tmp_path / "q"}
        with pytest.raises(ToucheError, match="line 1 is longer than 65,536 characters"):
            evaluate_run(write(tmp_path, "run.txt", RUN), **arguments)


def test_judged_topics_the_run_lacks_and_no_judged_document_are_said(tmp_path, caplog):
    """A 4-topic run against 25 topics' qrels scored 0.14 with no word (the 21 others count 0); qrels of another
    corpus gave 0.0000 everywhere, stance too, with exit 0."""
    run, qrels = write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS + ["3 0 z 1"])
    evaluate_run(run, qrels, stance_qrels=write(tmp_path, "s", STANCE))
    assert caplog.messages == [f"{run}: 1 of the 3 topics q judges are not in the run; they count 0 in the means"]
    caplog.clear()
    other = write(tmp_path, "other", ["1 0 m 1", "2 0 n 2"])
    result = evaluate_run(run, other, stance_qrels=write(tmp_path, "s2", ["1 0 m PRO"]))
    assert result.mean["relevance nDCG@5"] == 0 and result.mean["stance judged documents"] == 0
    assert caplog.messages == [
        f"{run}: none of its documents is judged in other: every score is 0 (the qrels of another corpus?)",
        f"{run}: none of its documents is judged in s2: its stance macro-F1 is 0 (the stance qrels of "
        "another corpus?)"]


def test_grades_written_with_zero_decimals_are_read_as_trec_eval_reads_them(tmp_path):
    """Touché 2020 Task 1's first qrels write "4.0" and "-2.0": one shipped file could not be evaluated."""
    written = evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS)).mean
    decimals = [line.rsplit(" ", 1)[0] + " " + line.rsplit(" ", 1)[1] + ".0" for line in QRELS]
    assert evaluate_run(tmp_path / "run.txt", write(tmp_path, "q", decimals)).mean == written


def test_a_line_of_other_columns_is_named(tmp_path):
    """"not enough values to unpack (expected 6, got 5)" named no line of a run of a million."""
    with pytest.raises(ToucheError, match=r"run.txt: not a 6-column TREC run \(line 2: 5 columns, not 6\)"):
        evaluate_run(write(tmp_path, "run.txt", [RUN[0], "1 FIRST a 2 2.0", *RUN[2:]]), write(tmp_path, "q", QRELS))
    with pytest.raises(ToucheError, match=r"q: not a TREC qrels file \(line 3: 5 columns, not 4\)"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", ["1 0 a 2", "", "1 0 b\tc 0"]))
    with pytest.raises(ToucheError, match=r"s: not a stance qrels file \(line 1: 3 columns, not 4\)"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS),
                     stance_qrels=write(tmp_path, "s", ["1 0 FIRST"]))


def test_quality_qrels_that_judge_none_of_the_runs_topics_are_an_error(tmp_path):
    """They gave quality nDCG 0.0000 four times, exit 0, where stance qrels so are an error."""
    with pytest.raises(ToucheError, match=r"qq: holds no judgements$"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS), write(tmp_path, "qq", []))
    with pytest.raises(ToucheError, match=r"run.txt: none of its topics is judged in .*qq \(of the topics q judges\)"):
        evaluate_run(tmp_path / "run.txt", tmp_path / "q", write(tmp_path, "qq", ["3 0 a 1"]))
    with pytest.raises(ToucheError, match=r"none of its topics is judged in .*qq"):
        evaluate_run(tmp_path / "run.txt", tmp_path / "q", write(tmp_path, "qq", ["9 0 a 1"]))


def test_stance_labels_in_small_letters_and_relevance_qrels_as_stance_qrels_are_said_so(tmp_path):
    lower = [" ".join(part.lower() if i == 1 else part for i, part in enumerate(line.split())) for line in RUN]
    with pytest.raises(ToucheError, match=r"labels are written in capitals, as the judgements write them"):
        evaluate_run(write(tmp_path, "run.txt", lower), write(tmp_path, "q", QRELS),
                     stance_qrels=write(tmp_path, "s", STANCE))
    with pytest.raises(ToucheError, match=r"q: its labels \(-2, 0, 1, 2\) are no stance labels \(FIRST, SECOND, "
                                          r"NEUTRAL, NO \| PRO, CON, NEU, NO\): relevance qrels\?"):
        evaluate_run(write(tmp_path, "run.txt", RUN), tmp_path / "q", stance_qrels=tmp_path / "q")


def test_a_plain_trec_runs_0_labels_no_stance(tmp_path):
    """A Touché 2020/21 Task 1 run written as trec_eval's runs are ("1 0 doc 1 2.0 tag")."""
    plain = [" ".join("0" if i == 1 else part for i, part in enumerate(line.split())) for line in RUN]
    result = evaluate_run(write(tmp_path, "run.txt", plain), write(tmp_path, "q", QRELS),
                          stance_qrels=write(tmp_path, "s", STANCE))
    assert result.mean["stance macro-F1"] == 0.0


def test_tied_scores_are_said_and_ordered_as_trec_eval_orders_them(tmp_path, caplog):
    tied = ["1 Q0 a 1 1.0 t", "1 Q0 b 2 1.0 t", "1 Q0 c 3 1.0 t", "2 Q0 x 1 2.0 t", "2 Q0 y 2 1.0 t"]  # ranks a, b, c
    by_id = ["1 Q0 c 1 3.0 t", "1 Q0 b 2 2.0 t", "1 Q0 a 3 1.0 t", "2 Q0 x 1 2.0 t", "2 Q0 y 2 1.0 t"]
    assert (evaluate_run(write(tmp_path, "run.txt", tied), write(tmp_path, "q", QRELS)).mean
            == evaluate_run(write(tmp_path, "by-id.txt", by_id), tmp_path / "q").mean)
    assert ("run.txt: documents of equal scores in 1 topic (e.g. topic 1); scored as trec_eval orders them"
            in caplog.text)


def test_qrels_of_more_than_the_bound_are_read_no_further(tmp_path, monkeypatch):
    """10 million lines in 117 kB of gzip took 1.5 GB and 28 s."""
    from app import evaluate

    monkeypatch.setattr(evaluate, "MAX_QRELS_CHARS", 20)
    with pytest.raises(ToucheError, match=r"q: not a TREC qrels file \(more than 0 MB of judgements"):
        evaluate_run(write(tmp_path, "run.txt", RUN), write(tmp_path, "q", QRELS))


def test_a_spam_grade_ranked_first_counts_as_zero_not_below(tmp_path):
    """Touché's -2 (spam) is a 0 to nDCG: counted as -2 it would lower the ideal ranking's gain too and lift this
    ranking's nDCG@5 from 0.620 to 0.860 (ir_measures on the same judgements with 0 in its place gives 0.620)."""
    run = write(tmp_path, "run.txt", ["1 Q0 d1 1 3.0 t", "1 Q0 d2 2 2.0 t", "1 Q0 d3 3 1.0 t"])
    result = evaluate_run(run, write(tmp_path, "q", ["1 0 d1 -2", "1 0 d2 1", "1 0 d3 2"]))
    assert result.mean["relevance nDCG@5 judged-only"] == pytest.approx(0.6199, abs=1e-4)


def test_topics_are_listed_in_numeric_order():
    from app.evaluate import topic_order

    assert sorted(["10", "2", "b", "1", "a", "100"], key=topic_order) == ["1", "2", "a", "b", "10", "100"]


def test_the_mean_is_the_arithmetic_mean_of_differing_topics(tmp_path):
    """Three topics of different nDCG@5: a median, or a mean over the judged documents, would differ."""
    import statistics

    run = write(tmp_path, "run.txt", [f"{q} Q0 d{r} {r} {9 - r}.0 t" for q in (1, 2, 3) for r in (1, 2, 3)])
    qrels = write(tmp_path, "q", ["1 0 d1 2", "1 0 d2 0", "1 0 d3 0", "2 0 d1 0", "2 0 d2 0", "2 0 d3 2",
                                  "3 0 d1 0", "3 0 d2 2", "3 0 d3 1"])
    result = evaluate_run(run, qrels)
    per_topic = [result.per_topic[q]["relevance nDCG@5"] for q in ("1", "2", "3")]
    assert len(set(per_topic)) == 3
    assert result.mean["relevance nDCG@5"] == pytest.approx(statistics.fmean(per_topic), abs=1e-12)
