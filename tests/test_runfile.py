import gzip
from dataclasses import replace

import pytest

from app.errors import ToucheError
from app.records import RunRow
from app.files import prepare_output
from app import runfile
from app.runfile import RUN_FILES, check_tag, format_row, ranked_rows, validate_run, write_run


def rows_for(topics=3, per_topic=3, stance="Q0", tag="t"):
    return [row for q in range(1, topics + 1)
            for row in ranked_rows(str(q), [f"d{i}" for i in range(per_topic)], [3.0 - i for i in range(per_topic)],
                                   [stance] * per_topic, tag, 1000)]


def test_ranked_rows_sort_keep_the_given_order_for_ties_dedupe_and_cut():
    rows = ranked_rows("1", ["b", "a", "c", "a", "d"], [1.0, 1.0, 2.0, 0.5, 0.1], None, "tag", depth=3)
    assert [r.doc_id for r in rows] == ["c", "b", "a"]  # b was given before a
    assert [r.rank for r in rows] == [1, 2, 3]
    scores = [r.score for r in rows]
    assert scores[0] > scores[1] > scores[2]  # the tie between a and b is broken
    assert all(r.stance == "Q0" for r in rows)


def test_scores_stay_strictly_decreasing_at_printed_precision():
    rows = ranked_rows("1", [f"d{i}" for i in range(5)], [1e-9] * 5, None, "t", 10)
    printed = [format_row(r).split()[4] for r in rows]
    assert len(set(printed)) == 5 and "e" not in "".join(printed)


def test_write_is_atomic_and_refuses_to_overwrite(tmp_path):
    path = write_run(rows_for(), tmp_path)
    assert path.read_text().splitlines()[0] == "1 Q0 d0 1 3.000000 t"
    with pytest.raises(ToucheError, match="exists"):
        write_run(rows_for(), tmp_path)
    (tmp_path / "ir-metadata.yml").write_text("describes the run replaced")  # a kill left it beside the new one
    write_run(rows_for(topics=4), tmp_path, overwrite=True)
    assert len(path.read_text().splitlines()) == 12
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_a_run_txt_another_run_put_there_meanwhile_stays_without_overwrite(tmp_path, monkeypatch):
    """Two runs into one directory both passed the check before their work; the later one's run.txt replaced the
    other's, and both exited 0."""
    from app import runfile

    written = runfile.format_row

    def racing(row):  # another run puts its run.txt in place while this one writes
        if not (tmp_path / "run.txt").exists():
            (tmp_path / "run.txt").write_text("1 Q0 other 1 9.000000 theirs\n")
        return written(row)

    monkeypatch.setattr(runfile, "format_row", racing)
    with pytest.raises(ToucheError, match="run.txt exists; pass --overwrite to replace it"):
        write_run(rows_for(), tmp_path)
    assert (tmp_path / "run.txt").read_text() == "1 Q0 other 1 9.000000 theirs\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]  # no temporary left
    write_run(rows_for(), tmp_path, overwrite=True)
    assert (tmp_path / "run.txt").read_text().startswith("1 Q0 d0 1 3.000000 t")


def test_without_hard_links_the_run_is_renamed_into_place(tmp_path, monkeypatch):
    """A file system that takes no hard links (EPERM): run.txt is renamed into place, as before."""
    import errno
    import os

    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = write_run(rows_for(), tmp_path)
    assert path.read_text().startswith("1 Q0 d0 1 3.000000 t") and [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_a_killed_runs_temporary_goes_and_a_running_ones_stays(tmp_path):
    """A run into the same directory removed the other's half-written run.txt, which then failed after its work
    ("cannot write run.txt: no such file or directory")."""
    import fcntl
    import os

    killed, running = tmp_path / ".run.killed.tmp", tmp_path / ".run.running.tmp"
    killed.write_text("1 Q0 d0 1 3.0 t\n")
    running.write_text("1 Q0 d0 1 3.0 t\n")
    descriptor = os.open(running, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # as atomic_file holds it while it writes
        write_run(rows_for(), tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == [".run.running.tmp", "run.txt"]
    finally:
        os.close(descriptor)


def test_a_temporary_swept_before_its_writer_locks_it_is_made_again(tmp_path, monkeypatch):
    """Between making its temporary and locking it, a writer could lose it to another run's sweep: "cannot write
    run.txt: no such file or directory" after all the work."""
    import fcntl

    from app import files

    real, swept = fcntl.flock, []

    def sweep_first(descriptor, operation):
        if operation == fcntl.LOCK_EX and not swept:  # the writer's lock, the first time: another run sweeps
            swept.append(True)
            files.remove_abandoned_temporaries(tmp_path, ".run.")
        return real(descriptor, operation)

    monkeypatch.setattr(files.fcntl, "flock", sweep_first)
    write_run(rows_for(), tmp_path)
    assert swept and [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_overwriting_replaces_a_gzipped_run_too(tmp_path):
    """TIRA rejects an output holding both run.txt and run.txt.gz."""
    with gzip.open(tmp_path / "run.txt.gz", "wt") as out:
        out.write("1 Q0 old 1 1.0 t\n")
    with pytest.raises(ToucheError, match="run.txt.gz exists"):
        write_run(rows_for(), tmp_path)
    write_run(rows_for(), tmp_path, overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"] and validate_run(tmp_path).ok


def test_a_truncated_gzipped_run_is_invalid_not_a_crash(tmp_path):
    data = gzip.compress(b"".join(format_row(row).encode() for row in rows_for()))
    (tmp_path / "run.txt.gz").write_bytes(data[: len(data) // 2])
    result = validate_run(tmp_path)
    assert not result.ok and "cannot read the run" in result.errors[0]
    (tmp_path / "run.txt.gz").write_bytes(data[:10] + b"garbage, not deflate" + data[30:])
    result = validate_run(tmp_path)
    assert not result.ok and "cannot read the run" in result.errors[0]


def test_a_pipe_is_read_as_a_run_file(tmp_path):
    """`touche validate <(zcat run.gz)`: a pipe exists, though it is no regular file."""
    import os
    import threading

    os.mkfifo(tmp_path / "pipe")
    writer = threading.Thread(target=(tmp_path / "pipe").write_text, args=("".join(f"{l}\n" for l in GOOD),),
                              daemon=True)  # it waits for a reader for ever where none opens the pipe
    writer.start()
    result = validate_run(tmp_path / "pipe")
    writer.join(timeout=5)
    assert result.ok and result.lines == len(GOOD), result.errors
    assert validate_run(tmp_path / "absent").errors == [f"{tmp_path / 'absent'}: no such file or directory"]


def test_a_pipe_an_output_directory_holds_as_its_run_is_an_error(tmp_path):
    """`touche validate DIR` opened DIR/run.txt, a FIFO no one writes, and waited for ever; one named itself is
    read (above)."""
    import os

    os.mkfifo(tmp_path / "run.txt")
    assert validate_run(tmp_path).errors == [
        f"{tmp_path / 'run.txt'}: not a regular file (a pipe or a device)"]


def test_a_run_txt_link_that_leads_nowhere_is_said_so(tmp_path):
    """It was "expected exactly one of run.txt / run.txt.gz, found 0"."""
    (tmp_path / "run.txt").symlink_to(tmp_path / "gone.txt")
    assert validate_run(tmp_path).errors == [f"{tmp_path / 'run.txt'}: a link to {tmp_path / 'gone.txt'}, which "
                                             "leads nowhere"]


def test_a_directory_named_run_txt_is_an_error_before_the_work(tmp_path):
    (tmp_path / "run.txt").mkdir()
    with pytest.raises(ToucheError, match="is a directory"):
        prepare_output(tmp_path, RUN_FILES, overwrite=True)


def test_empty_run_and_bad_tag_are_errors(tmp_path):
    with pytest.raises(ToucheError, match="empty"):
        write_run([], tmp_path)
    with pytest.raises(ToucheError, match="tag"):
        write_run([RunRow("1", "Q0", "d", 1, 1.0, "two words")], tmp_path)
    for tag in ("zero\u200bwidth", "not\udcffutf8", "nul\x00", "\u202e", "a\u202eb"):  # 2, 3: bytes argv could not
        # decode; 4, 5: a right-to-left override
        with pytest.raises(ToucheError, match="must be one word without spaces, control or invisible"):
            check_tag(tag)
    check_tag("t\u00e9st/2")
    assert not (tmp_path / "run.txt").exists()


def test_a_valid_run_validates(tmp_path):
    write_run(rows_for(stance="FIRST"), tmp_path)
    result = validate_run(tmp_path, "comparative")
    assert result.ok and result.lines == 9 and result.topics == 3 and not result.warnings


def write_lines(tmp_path, lines, name="run.txt"):
    (tmp_path / name).write_text("".join(line + "\n" for line in lines))
    return tmp_path


GOOD = [f"{q} Q0 d{r} {r} {10 - r}.0 t" for q in (1, 2, 3) for r in (1, 2)]


@pytest.mark.parametrize("lines, problem", [
    (GOOD[:4], "at least 5"),
    (GOOD[:2] + [l.replace("2 Q0", "1 Q0") for l in GOOD[2:]] , "at least 3 are required"),
    (GOOD + ["4 Q0 d1 1 1.0"], "expected 6 columns"),
    (GOOD + ["4 Q0 d1 one 1.0 t"], "not an integer"),
    (GOOD + ["4 Q0 d1 1 high t"], "not a number"),
    (GOOD + ["4 Q0 d1 1_0 1.0 t"], "not an integer"),  # Python's int() takes these; trec_eval does not
    (GOOD + ["4 Q0 d1 \u0661 1.0 t"], "not an integer"),
    (GOOD + ["4 Q0 d1 1 0_5 t"], "not a number"),
    (GOOD + ["4 Q0 d1 " + "1" * 5000 + " 1.0 t"], "too long an integer"),  # past Python's 4,300 digits too
    (GOOD + ["4 Q0 d1 " + "1" * 19 + " 1.0 t"], "too long an integer for trec_eval"),  # was "not an integer"
    (GOOD + ["4 Q0 d1 +-5 1.0 t"], "rank '+-5' is not an integer"),
    (GOOD + ["4 Q0 d1 1 1.0 other"], "tags"),
    (GOOD + ["4 Q0 d1 1 1.0 t", "4 Q0 d1 2 0.5 t"], "more than once"),
    (GOOD + ["4 Q0 d1 1 1.0 t", "4 Q0 d2 3 0.5 t"], "ranks are not"),
    (GOOD + ["4 Q0 d1 1 1.0 t", "4 Q0 d2 2 2.0 t"], "score rises"),
    (GOOD + ["4 PRO d1 1 1.0 t", "4 FIRST d2 2 0.5 t"], "not one task's set"),
    (GOOD + ["4 MAYBE d1 1 1.0 t"], "not one task's set"),
    (GOOD + ["4 Q0 d1 1 inf t"], "is not finite"), (GOOD + ["4 Q0 d1 1 nan t"], "is not finite"),
    (GOOD + ["4 Q0 d1 1 1e999 t"], "is not finite"),
    (GOOD[:3] + [""] + GOOD[3:], "line 4: empty"),
])
def test_each_broken_rule_is_reported(tmp_path, lines, problem):
    result = validate_run(write_lines(tmp_path, lines))
    assert not result.ok
    assert any(problem in error for error in result.errors), result.errors


def test_task_restricts_stance_labels(tmp_path):
    lines = [line.replace("Q0", "PRO") for line in GOOD]
    assert validate_run(write_lines(tmp_path, lines)).ok
    result = validate_run(tmp_path, "comparative")
    assert not result.ok and result.errors == ["stance labels PRO are not the comparative task's (FIRST, NEUTRAL, "
                                               "NO, SECOND, or Q0)"]


def test_a_first_run_keeps_metadata_it_was_not_asked_to_replace(tmp_path):
    (tmp_path / "ir-metadata.yml").write_text("someone's")
    write_run(rows_for(), tmp_path)
    assert (tmp_path / "ir-metadata.yml").read_text() == "someone's"


def test_a_rank_given_twice_is_a_gap_not_a_rising_score(tmp_path):
    """It was also "score rises from rank 5 to 5", the two lines of one rank being ordered by their scores."""
    lines = GOOD + ["4 Q0 d1 1 3.0 t", "4 Q0 d2 1 2.0 t", "4 Q0 d3 3 1.0 t"]
    assert validate_run(write_lines(tmp_path, lines)).errors == ["topic 4: ranks are not 1..3 without gaps"]


@pytest.mark.parametrize("bad", ["1 Q0 d3 3 1.0", "1 Q0 d3 3.0 1.0 t", "1 Q0 d3 3 abc t"])
def test_a_rejected_line_is_one_error_not_also_a_gap_in_its_topic(tmp_path, bad):
    lines = GOOD[:2] + [bad, "1 Q0 d4 4 0.5 t"] + GOOD[2:]
    assert len(validate_run(write_lines(tmp_path, lines)).errors) == 1
    # A gap the rejected line does not explain is still one.
    errors = validate_run(write_lines(tmp_path, GOOD[:2] + [bad, "1 Q0 d5 5 0.5 t"] + GOOD[2:])).errors
    assert len(errors) == 2 and errors[1] == "topic 1: ranks are not 1..4 without gaps"


def test_a_byte_order_mark_is_named(tmp_path):
    """Named, and the run passes, as TIRA's check_format passes it: it was also "topic 1: ranks are not 1..2"."""
    result = validate_run(write_lines(tmp_path, ["\ufeff" + GOOD[0]] + GOOD[1:]))
    assert result.warnings == ["line 1: a byte order mark (U+FEFF) before topic '1' makes it another topic"]
    assert result.ok
    again = ["\ufeff1 Q0 d1 1 9.0 t", "1 Q0 d1 2 8.0 t"] + GOOD[2:]  # two topics to trec_eval: no duplicate
    assert validate_run(write_lines(tmp_path, again)).ok
    result = validate_run(write_lines(tmp_path, ["\ufeff" + GOOD[0].replace("d1", "d<1>")] + GOOD[1:]))
    assert result.warnings[1] == "line 1: special characters in an id"


def test_a_file_of_no_run_line_says_what_it_seems_to_be(tmp_path):
    """qrels or a corpus given to `touche validate` were a thousand column errors and no word of why."""
    assert validate_run(write_lines(tmp_path, ["1 0 d1 2", "1 0 d2 0"])).kind == (
        "every line has 4 columns, as TREC qrels have; a run has 6")
    assert validate_run(write_lines(tmp_path, ['{"id": "d1", "contents": "a text"}'])).kind == (
        "no line has the 6 columns of a run")
    assert validate_run(write_lines(tmp_path, GOOD[:1] + ["1 0 d1 2"])).kind == ""  # a run with a bad line


def test_columns_separated_by_other_whitespace_than_space_and_tab_are_named(tmp_path):
    """TIRA's check_format splits at any whitespace, trec_eval at ASCII whitespace only (C's isspace()): a no-break
    space passed unsaid."""
    result = validate_run(write_lines(tmp_path, [GOOD[0].replace(" ", "\u00a0", 1), "\u3000" + GOOD[1]] + GOOD[2:]))
    assert result.ok and result.warnings == [
        "line 1: U+00A0 between or before columns, which trec_eval reads as part of a column",
        "line 2: U+3000 between or before columns, which trec_eval reads as part of a column"]
    assert validate_run(write_lines(tmp_path, [GOOD[0].replace(" ", "\t"), GOOD[1].replace(" ", "\x0b")] + GOOD[2:])).ok
    result = validate_run(write_lines(tmp_path, [GOOD[0].replace(" ", "\x1c", 1)] + GOOD[1:]))  # an ASCII separator
    assert result.ok and result.warnings == [
        "line 1: U+001C between or before columns, which trec_eval reads as part of a column"]
    assert not validate_run(write_lines(tmp_path, [GOOD[0] + "\u00a0"] + GOOD[1:])).warnings  # after the tag


def test_a_plain_trec_run_labels_no_stance_with_0(tmp_path):
    """Column 2 of trec_eval's runs, which TIRA accepts: it was "stance labels 0 are not one task's set"."""
    plain = [line.replace(" Q0 ", " 0 ") for line in GOOD]
    assert validate_run(write_lines(tmp_path, plain)).ok
    assert validate_run(write_lines(tmp_path, plain), task="controversial").ok


def test_ties_and_scientific_notation_are_warnings(tmp_path):
    result = validate_run(write_lines(tmp_path, GOOD + ["4 Q0 d1 1 1e-3 t", "4 Q0 d2 2 1e-3 t"]))
    assert result.ok
    assert any("tied" in w for w in result.warnings) and any("scientific" in w for w in result.warnings)


def test_output_dir_needs_exactly_one_run(tmp_path):
    assert "found 0" in validate_run(tmp_path).errors[0]
    write_lines(tmp_path, GOOD)
    (tmp_path / "run.txt.gz").write_bytes(gzip.compress("\n".join(GOOD).encode()))
    assert "found 2" in validate_run(tmp_path).errors[0]
    (tmp_path / "run.txt").unlink()
    assert validate_run(tmp_path).ok


# --- TIRA's own check_format is the oracle: what TIRA rejects, `touche validate` rejects too -------------------

def tira_accepts(path) -> bool:
    from tira.check_format import check_format

    status, _ = check_format(path, "run.txt")
    return str(getattr(status, "name", status)) == "OK"


def test_runs_we_write_pass_tiras_check_format(tmp_path):
    for task, stance in (("comparative", "FIRST"), ("controversial", "CON"), (None, "Q0")):
        out = tmp_path / stance
        write_run(rows_for(topics=5, per_topic=4, stance=stance), out)
        assert validate_run(out, task).ok and tira_accepts(out)


@pytest.mark.parametrize("lines", [
    GOOD, GOOD[:4], GOOD[:2] + [l.replace("2 Q0", "1 Q0") for l in GOOD[2:]], GOOD + ["4 Q0 d1 1 1.0"],
    GOOD + ["4 Q0 d1 one 1.0 t"], GOOD + ["4 Q0 d1 1 high t"], GOOD + ["4 Q0 d1 1 1.0 t", "4 Q0 d1 2 0.5 t"],
    GOOD + ["4 Q0 d1 1 1e-3 t", "4 Q0 d2 2 1e-3 t"], ["1 Q0 d1 1 1.0 t"] * 6, [""] * 3, GOOD + [""],
    GOOD[:3] + ["  "] + GOOD[3:],
], ids=lambda lines: f"{len(lines)} lines")
def test_validate_never_passes_what_tira_rejects(tmp_path, lines):
    write_lines(tmp_path, lines)
    if validate_run(tmp_path).ok:
        assert tira_accepts(tmp_path)
    if not tira_accepts(tmp_path):
        assert not validate_run(tmp_path).ok


def test_foreseen_problems_are_tiras_size_checks_before_the_work():
    assert runfile.foreseen_problems(3, 2) == {}
    assert runfile.foreseen_problems(3, 1) == {"lines": "3 topics of at most 1 document each: at most 3 lines; at "
                                                        "least 5 are required"}
    assert runfile.foreseen_problems(2, 1000) == {"topics": "the input has 2 topics; at least 3 are required"}


def test_unforeseen_leaves_out_the_size_checks_said_before_the_work(tmp_path):
    rows = rows_for(topics=2)
    write_run(rows[:-1] + [replace(rows[-1], tag="other")], tmp_path)  # 2 topics, 2 tags
    validation = validate_run(tmp_path)
    assert len(validation.errors) == 2
    unforeseen = validation.unforeseen(runfile.foreseen_problems(2, 1000))
    assert len(unforeseen) == 1 and "2 tags" in unforeseen[0]
    assert validation.unforeseen({}) == validation.errors


@pytest.mark.parametrize("name", ["run.txt", "run.txt.gz"])
def test_a_run_past_tiras_limit_is_read_no_further(tmp_path, monkeypatch, name):
    """A 2.9 MB run.txt.gz of 100 million lines took 7.9 GB in validate and evaluate, then a MemoryError."""
    from app.evaluate import evaluate_run

    monkeypatch.setattr(runfile, "MAX_BYTES", 1024)  # 5,622 bytes of lines, 997 gzipped
    lines = "".join(f"{q} Q0 d{i} {i + 1} {100 - i}.0 t\n" for q in (1, 2, 3) for i in range(100)).encode()
    (tmp_path / name).write_bytes(gzip.compress(lines) if name.endswith(".gz") else lines)
    result = validate_run(tmp_path / name)
    limit = "0 MB unpacked, the most this reads" if name.endswith(".gz") else "0 MB, TIRA's limit"
    assert not result.ok and result.errors == [f"file is larger than {limit}"]
    (tmp_path / "q").write_text("1 0 d1 1\n")
    with pytest.raises(ToucheError, match=f"the run is larger than {limit}"):
        evaluate_run(tmp_path / name, tmp_path / "q")
    monkeypatch.setattr(runfile, "MAX_BYTES", len(lines))
    assert validate_run(tmp_path / name).ok
    if name.endswith(".gz"):  # 1,000 topics of ClueWeb22 ids: 16 MB stored, 88 MB unpacked, which TIRA accepts
        monkeypatch.setattr(runfile, "MAX_BYTES", len(lines) // 3)
        assert validate_run(tmp_path / name).ok


def test_validate_lists_the_first_problems_and_counts_the_rest(tmp_path, monkeypatch):
    """A run of a million bad lines must not become a million messages in memory and on the screen."""
    from typer.testing import CliRunner

    from app.cli import app

    monkeypatch.setattr(runfile, "MAX_LISTED", 3)
    (tmp_path / "run.txt").write_text("".join(f"1 Q0 d{i} x 1.0 t\n" for i in range(10)))
    result = validate_run(tmp_path / "run.txt")
    assert len(result.errors) == 3 and result.errors.more == 7 + 1 and result.errors.count == 11  # and 0 topics
    output = CliRunner().invoke(app, ["validate", str(tmp_path / "run.txt")]).stdout.splitlines()
    assert output[3:] == ["error: ... and 8 more", f"invalid: 11 problems in {tmp_path / 'run.txt'}"]


def test_a_gzipped_run_is_bounded_as_stored_as_tira_bounds_it(tmp_path, monkeypatch):
    """TIRA measures the file on disk: a gzip stored without compression past 75 MB was valid here, refused there."""
    monkeypatch.setattr(runfile, "MAX_BYTES", 4096)
    lines = "".join(f"{q} Q0 d{i} {i + 1} {100 - i}.0 t\n" for q in (1, 2, 3) for i in range(20)).encode()
    (tmp_path / "run.txt.gz").write_bytes(gzip.compress(lines, compresslevel=0) + b"\0" * 4096)
    assert validate_run(tmp_path / "run.txt.gz").errors == ["file is larger than 0 MB, TIRA's limit"]


@pytest.mark.parametrize("given", ["directory", "file"])
def test_an_output_holding_run_txt_and_run_txt_gz_is_invalid_as_in_tira(tmp_path, given):
    """TIRA counts whatever lies under either name, a directory too; the file alone was valid here."""
    write_run(rows_for(), tmp_path)
    (tmp_path / "run.txt.gz").mkdir()
    result = validate_run(tmp_path if given == "directory" else tmp_path / "run.txt")
    assert not result.ok and ("found 2" in result.errors[0] or "lies beside it" in result.errors[0]), result.errors


def test_rank_zero_and_a_1001st_document_are_errors_where_the_bounds_lie(tmp_path):
    """Ranks count from 1 and a topic holds at most 1,000 documents: each bound checked where it lies."""
    lines = GOOD + ["4 Q0 d1 0 2.0 t", "4 Q0 d2 1 1.0 t"]
    assert validate_run(write_lines(tmp_path, lines)).errors == ["topic 4: ranks are not 1..2 without gaps"]
    full = GOOD + [f"4 Q0 d{rank} {rank} {2000 - rank} t" for rank in range(1, 1001)]
    assert validate_run(write_lines(tmp_path, full)).errors == []
    over = full + ["4 Q0 d1001 1001 1.0 t"]
    assert validate_run(write_lines(tmp_path, over)).errors == ["topic 4: 1001 documents; at most 1000 are allowed"]


def test_a_document_given_twice_is_ranked_once_whatever_the_depth():
    """A re-rank file or ChatNoir listing a document twice: its second line reached run.txt at a depth past it."""
    rows = ranked_rows("1", ["b", "a", "c", "a", "d"], [1.0, 1.0, 2.0, 0.5, 0.1], None, "tag", depth=5)
    assert [r.doc_id for r in rows] == ["c", "b", "a", "d"]


def test_the_run_is_readable_by_others_whatever_the_umask(tmp_path):
    """TIRA reads the run as another user: mkstemp's 0600 (or a umask of 077) would hide it."""
    import os
    import stat

    old = os.umask(0o077)
    try:
        path = write_run(ranked_rows("1", ["a"], [1.0], None, "t", 1), tmp_path / "out")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_run_in_utf16_or_with_a_byte_utf8_does_not_hold_is_said_in_words(tmp_path):
    """It was Python's "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"."""
    (tmp_path / "run.txt").write_text("\n".join(GOOD) + "\n", encoding="utf-16")
    assert validate_run(tmp_path / "run.txt").errors == [
        "cannot read the run: UTF-16 text (its byte order mark says so), not UTF-8: save it as UTF-8"]
    (tmp_path / "run.txt").write_text("\n".join(GOOD) + "\n", encoding="utf-32")
    assert validate_run(tmp_path / "run.txt").errors == [
        "cannot read the run: UTF-32 text (its byte order mark says so), not UTF-8: save it as UTF-8"]
    (tmp_path / "run.txt").write_bytes(b"1 Q0 d\xff 1 2.0 t\n")
    assert validate_run(tmp_path / "run.txt").errors == [
        "cannot read the run: not UTF-8 text (a byte 0xff that UTF-8 does not hold there)"]
    import gzip

    (tmp_path / "run.txt").write_bytes(gzip.compress("\n".join(GOOD).encode()))
    assert validate_run(tmp_path / "run.txt").errors == [
        "cannot read the run: gzip data under a name without .gz: unpack it, or name it .gz"]
    (tmp_path / "run.txt").write_bytes(b"1 Q0 d 1 2.0 t\n" * 1000 + b"\xff\xfe\n")  # no mark: 16 kB in
    assert validate_run(tmp_path / "run.txt").errors == [
        "cannot read the run: not UTF-8 text (a byte 0xff that UTF-8 does not hold there)"]


def test_a_run_behind_a_symbolic_link_loop_is_said_so(tmp_path):
    """It was "no such file or directory", of a path that is there."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    result = validate_run(tmp_path / "a" / "run.txt")
    assert result.errors == [f"{tmp_path / 'a' / 'run.txt'}: a symbolic link loop"]


def test_a_rise_after_a_tie_is_still_an_error(tmp_path):
    """The check stopped at a topic's first tie, so a top score at rank 3 passed as valid (a helper's attack)."""
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 5.0 t\n1 Q0 b 2 5.0 t\n1 Q0 c 3 9.0 t\n2 Q0 a 1 1.0 t\n3 Q0 a 1 1.0 t\n")
    result = validate_run(run)
    assert not result.ok
    assert any("score rises from rank 2 to 3" in error for error in result.errors)
    assert result.warnings == ["topic 1: tied scores at ranks 1 and 2"]


def test_q0_in_small_letters_labels_no_stance(tmp_path):
    """TIRA accepts it and trec_eval ignores the column; it was "stance labels q0 are not one task's set"."""
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{topic} q0 d{rank} {rank} {10 - rank} t\n" for topic in "123" for rank in (1, 2)))
    result = validate_run(run)
    assert result.ok, result.errors


def test_an_output_folder_this_user_may_not_search_is_said_so(tmp_path, monkeypatch):
    """A folder of mode 000 holding run.txt was "expected exactly one of run.txt / run.txt.gz, found 0"."""
    import errno
    import os

    (tmp_path / "run.txt").write_text("1 Q0 a 1 1.0 t\n")
    lstat = os.lstat

    def denied(path, *args, **kwargs):
        if os.fspath(path).startswith(os.fspath(tmp_path) + os.sep):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", denied)
    with pytest.raises(ToucheError, match=r": permission denied$"):
        runfile.locate_run(tmp_path)


def test_the_write_of_a_run_probes_its_directory_without_bytes(tmp_path, monkeypatch):
    """The 64 kB probe that says a full disk before the work also ran at the write, after it: a run.txt that fitted
    into what was left was refused (a review). The run's own write says a full disk."""
    import errno
    import os

    from app.records import RunRow

    def full(handle, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)  # the probe's writes; the run's file writes go through its own buffer
    rows = [RunRow(qid, "Q0", f"d{rank}", rank, 3.0 - rank, "tag") for qid in "123" for rank in (1, 2)]
    path = write_run(rows, tmp_path / "out", overwrite=False)
    assert len(path.read_text().splitlines()) == 6
