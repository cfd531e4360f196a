"""Retraining outside this team: each training module's DATA_FILES drives the missing-file check and docs/DATA.md."""

import gzip
import re
from importlib import import_module
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import TRAINED_MODELS, app
from app.errors import ToucheError
from app.training import common
from app.training import quality as training_quality
from app.training import stance as training_stance
from app.training.common import require_data

DATA_DOC = Path(__file__).parents[1] / "docs" / "DATA.md"
MODULES = [*(name.replace("-", "_") for name in TRAINED_MODELS), "fusion"]


def errors(stderr: str) -> list[str]:
    """stderr less the training's log lines (`touche train` logs its progress at INFO)."""
    return [line for line in stderr.splitlines() if not re.match(r"\d\d:\d\d:\d\d (INFO|WARNING) ", line)]


def data_files(module: str) -> tuple[str, ...]:
    return import_module(f"app.training.{module}").DATA_FILES


@pytest.mark.parametrize("name", list(TRAINED_MODELS))
def test_train_on_an_empty_folder_is_one_line_naming_the_file_data_and_the_doc(tmp_path, name):
    result = CliRunner().invoke(app, ["train", name, "--data", str(tmp_path), "--out", str(tmp_path / "models")])
    files = data_files(name.replace("-", "_"))
    assert result.exit_code == 1
    assert errors(result.stderr) == [
        f"touche: error: touche train {name}: {tmp_path / files[0]} is missing (and {len(files) - 1} more); "
        "pass --data DIR holding the files docs/DATA.md lists"]
    assert not (tmp_path / "models").exists()


@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_a_seed_numpy_cannot_take_is_a_usage_error_before_any_work(tmp_path, seed):
    """--seed -1 was scikit-learn's internal error, for `quality` after minutes of encoding."""
    result = CliRunner().invoke(app, ["train", "quality", "--seed", seed, "--out", str(tmp_path / "m")])
    assert result.exit_code == 2 and "Invalid value for '--seed'" in result.stderr
    assert not (tmp_path / "m").exists()


def test_a_missing_data_folder_is_named(tmp_path):
    result = CliRunner().invoke(app, ["train", "quality", "--data", str(tmp_path / "absent")])
    assert result.exit_code == 1
    assert "\n".join(errors(result.stderr)) == (f"touche: error: touche train quality: no data folder "
                                                f"{tmp_path / 'absent'}; pass --data DIR holding the files "
                                                "docs/DATA.md lists")


def test_one_missing_file_is_named_and_globs_need_a_match(tmp_path):
    files = ("a/one.txt", "b/*.csv.gz")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("")
    (tmp_path / "b").mkdir()
    with pytest.raises(Exception, match=r"b/\*\.csv\.gz is missing; pass --data"):
        require_data(tmp_path, files, "x")
    (tmp_path / "b" / "1.csv.gz").write_bytes(b"")
    require_data(tmp_path, files, "x")


@pytest.mark.parametrize("module", MODULES)
def test_docs_data_names_every_file_a_training_module_reads(module):
    page = DATA_DOC.read_text(encoding="utf-8")
    assert [name for name in data_files(module) if f"`{name}`" not in page] == []


def test_the_cross_encoder_asks_only_for_the_controversial_data():
    """It refused a data folder without the comparative QA pairs, 2022 dev data and CompSent-19, which it never
    reads."""
    comparative = {training_stance.QA_PAIRS, *training_stance.SIDE_SETS, *common.DEV_PASSAGES, *common.DEV_STANCES}
    cross = set(data_files("stance_cross"))
    assert not comparative & cross and "argument-quality/ibm-argq-30k/arg_quality_rank_30k.csv.gz" in cross


@pytest.mark.parametrize("module", MODULES)
def test_the_shared_data_holds_every_file(shared_data, module):
    require_data(shared_data, data_files(module), module)


def test_an_output_that_cannot_take_the_models_is_refused_before_the_training(shared_data, tmp_path):
    (tmp_path / "a-file").write_text("")
    result = CliRunner().invoke(app, ["train", "questions", "--data", str(shared_data), "--out",
                                      str(tmp_path / "a-file")])
    assert result.exit_code == 1
    assert "\n".join(errors(result.stderr)) == (f"touche: error: output path {tmp_path / 'a-file'} is a file, not "
                                                "a directory: pass a directory to --out")
    (tmp_path / "models" / "questions.json").mkdir(parents=True)  # was found after the training, the npz replaced
    result = CliRunner().invoke(app, ["train", "questions", "--data", str(shared_data), "--out",
                                      str(tmp_path / "models")])
    assert result.exit_code == 1 and errors(result.stderr) == [
        f"touche: error: {tmp_path / 'models' / 'questions.json'} is a directory, not a file: remove it or choose "
        "another output"]
    assert [path.name for path in (tmp_path / "models").iterdir()] == ["questions.json"]


def test_a_training_that_fails_leaves_no_empty_folder_it_made(shared_data, tmp_path, monkeypatch):
    """A stopped `touche train` left its empty --out folder behind, as a failed run no longer does."""
    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr("app.training.questions.main", stopped)
    result = CliRunner().invoke(app, ["train", "questions", "--data", str(shared_data), "--out",
                                      str(tmp_path / "new" / "models")])
    assert result.exit_code != 0
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()  # a folder that was there stays
    CliRunner().invoke(app, ["train", "questions", "--data", str(shared_data), "--out", str(tmp_path / "kept")])
    assert (tmp_path / "kept").is_dir()


def _all_data_files(folder: Path, module: str) -> None:
    """Every file `module` reads, present and empty (a glob gets one match)."""
    for name in data_files(module):
        path = folder / name.replace("*", "x")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


def test_a_damaged_data_file_is_one_line_naming_it_and_debug_shows_the_traceback(tmp_path):
    _all_data_files(tmp_path, "questions")
    damaged = tmp_path / "comparative-questions/Webis-CompQuestions-22/comparative-opinion-fact-questions/full.tsv"
    damaged.write_bytes(b"question\tcomp\n\xff\xfe broken\t1\n")
    arguments = ["train", "questions", "--data", str(tmp_path), "--out", str(tmp_path / "models")]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 1
    assert len(errors(result.stderr)) == 1
    assert errors(result.stderr) == [f"touche: error: cannot read {damaged}: not UTF-8 text (a byte 0xff that UTF-8 "
                                     "does not hold there); docs/DATA.md says what it holds"]
    damaged.write_text("question\tcomp\nIs tea better?\t1\n", encoding="utf-16")  # was "can't decode byte 0xff"
    assert errors(CliRunner().invoke(app, arguments).stderr) == [
        f"touche: error: cannot read {damaged}: UTF-16 text (its byte order mark says so), not UTF-8: save it as "
        "UTF-8; docs/DATA.md says what it holds"]
    result = CliRunner().invoke(app, [*arguments, "--debug"])
    assert result.exit_code == 1 and isinstance(result.exception, ToucheError)


def _gzip(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data))
    return path


@pytest.mark.parametrize("damage, reason", [
    (lambda path: path.write_bytes(b"sentence,object_a\n"), "Not a gzipped file"),
    (lambda path: path.write_bytes(gzip.compress(b"sentence,object_a,object_b\n" + b"x," * 5000)[:40]),
     "Compressed file ended before"),
    (lambda path: _gzip(path, b"sentence,object_a\nA beats B,A\n"), "it lacks the column or key 'object_b'"),
])
def test_the_stance_loaders_name_a_damaged_file(tmp_path, damage, reason):
    path = tmp_path / "stance" / "compsent19" / training_stance.COMPSENT_FILES["test"]
    path.parent.mkdir(parents=True)
    damage(path)
    with pytest.raises(ToucheError, match=rf"^cannot read {path}: {reason}"):
        training_stance.load_compsent(tmp_path, "test")


def test_damaged_json_and_topic_lists_are_named(tmp_path):
    folder = tmp_path / "stance" / "perspectrum"
    folder.mkdir(parents=True)
    (folder / "dataset_split_v1.0.json").write_text('{"1": "train"')
    with pytest.raises(ToucheError, match=r"dataset_split_v1\.0\.json: Expecting"):
        training_stance.load_perspectrum(tmp_path)
    topics = tmp_path / common.TASK / "dev-topics.txt"
    topics.parent.mkdir(parents=True)
    topics.write_text("1, 2, three\n")
    with pytest.raises(ToucheError, match=r"dev-topics\.txt: invalid literal for int\(\)"):
        common.dev_topic_numbers(tmp_path)


def test_dev_topic_lists_naming_nothing_usable_and_byte_order_marks(tmp_path):
    """An empty dev-topics.txt was a ZeroDivisionError after three minutes of training, a BOM "invalid literal"."""
    topics = tmp_path / common.TASK / "dev-topics.txt"
    topics.parent.mkdir(parents=True)
    topics.write_text("\n \n")
    with pytest.raises(ToucheError, match=r"dev-topics\.txt: it names no topic"):
        common.dev_topic_numbers(tmp_path)
    topics.write_text("\ufeff12, 2\n")
    assert common.dev_topic_numbers(tmp_path) == ["2", "12"]
    (tmp_path / common.TASK / "tira-input").mkdir()
    (tmp_path / common.TASK / "tira-input" / "topics.xml").write_text(
        "<topics><topic><number>7</number><title>Tea or coffee?</title></topic></topics>")
    with pytest.raises(ToucheError, match=r"dev-topics\.txt names none of the topics of .*topics\.xml"):
        common.read_dev_topics(tmp_path)


def test_a_tag_the_tagger_does_not_know_is_named(tmp_path):
    """'B-OBJ' was an internal error (tuple.index) after a minute of training."""
    from app.training import questions as training_questions

    path = tmp_path / "comparative-questions/Webis-CompQuestions-22/comparative-questions-parsing/full.tsv"
    path.parent.mkdir(parents=True)
    rows = ["sentence_id\twords\tlabels", "1\tis\tO", "1\ttea\tB-OBJ", "2\tor\tOBJ", "2\tx\tASP", "2\ty\tPRED"]
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ToucheError, match=r"full\.tsv: line 3: labels is 'B-OBJ', not one of O, OBJ, ASP, PRED"):
        training_questions.read_tagged_questions(tmp_path)


def test_a_row_of_other_width_is_named(tmp_path):
    folder = tmp_path / "argument-quality" / "ukpconvarg1" / "UKPConvArg1Strict-CSV"
    path = _gzip(folder / "a-debate_yes.csv.gz", b"#id\tlabel\ta1\ta2\n1_2\ta1\tone text\n")
    with pytest.raises(ToucheError, match=rf"^cannot read {path}: not enough values to unpack"):
        training_quality.load_ukp_pairs(tmp_path)


QUESTIONS_HEADER = b"id\taspect\tdirect\tfactual\topinion\tcomp\tquestion\tdataset\n"


@pytest.mark.parametrize("rows, reason", [
    (QUESTIONS_HEADER + b"1\t0\t0\t1\t0\t1\tWhat is a CPU?\tg\n2\t0\t0\t0\t1",
     "line 3 has fewer fields than the header (is the file cut short?)"),
    (QUESTIONS_HEADER + b"1\t0\t0\t1\t0\t1\tWhat is a CP", "line 2 has fewer fields than the header (is the file cut "
                                                              "short?)"),  # cut within a column read
    (QUESTIONS_HEADER + b"1\t0\t0\t1\t0\tyes\tWhat is a CPU?\tg\n", "line 2: comp is 'yes', not one of 0, 1"),
    (QUESTIONS_HEADER.replace(b"\tcomp", b"") + b"1\t0\t0\t1\t0\tWhat is a CPU?\tg\n",
     "it lacks the column or key 'comp'"),
    (QUESTIONS_HEADER, "no rows under the header (is the file cut short?)"),  # a ValueError of scikit-learn's split
    (QUESTIONS_HEADER + b"1\t0\t0\t1\t0\t1\tWhat is a CPU?\tg\n", "no row has comp '0' (is the file cut short?)"),
])
def test_training_on_a_cut_or_odd_table_is_one_line_naming_it(tmp_path, rows, reason):
    """A cut full.tsv was an internal error of scikit-learn's split, a missing column a KeyError after the read."""
    _all_data_files(tmp_path, "questions")
    damaged = tmp_path / "comparative-questions/Webis-CompQuestions-22/comparative-opinion-fact-questions/full.tsv"
    damaged.write_bytes(rows)
    result = CliRunner().invoke(app, ["train", "questions", "--data", str(tmp_path), "--out", str(tmp_path / "m")])
    assert result.exit_code == 1
    assert errors(result.stderr) == [
        f"touche: error: cannot read {damaged}: {reason}; docs/DATA.md says what it holds"]


def test_a_stance_table_cut_within_a_row_is_named(tmp_path):
    path = _gzip(tmp_path / "stance" / "vast" / training_stance.VAST_FILES["test"],
                 b"topic_str,post,label\nguns,A long comment,1\nguns,A comment cut")
    with pytest.raises(ToucheError, match=rf"^cannot read {path}: line 3 has fewer fields than the header"):
        training_stance.load_vast(tmp_path, "test")


def test_a_training_embedding_cache_cut_by_a_stop_is_not_left_to_be_read(tmp_path, monkeypatch):
    """Written in place, a cache cut by a full disk or a stop was loaded by the next training."""
    import errno

    import numpy as np

    monkeypatch.setattr(training_stance, "encode", lambda texts, **options: np.ones((len(texts), 384), np.float32))

    def cut(target, **arrays):
        (open(target, "wb") if isinstance(target, (str, Path)) else target).write(b"PK\x03\x04 half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(training_stance.np, "savez", cut)
    with pytest.raises(OSError):
        training_stance.EmbeddingCache(tmp_path)(["a text"])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("label", ["First", "SECOND\u200b", "PRO"])
def test_a_dev_stance_label_of_no_comparative_stance_is_said_before_the_training(fixtures, tmp_path, label):
    """`First` was read, then failed as a traceback in the head's fit, after the side model had trained."""
    import shutil

    shutil.copytree(fixtures / "quality" / "data", tmp_path / "data")
    stances = tmp_path / "data" / "touche-2022-task2" / "touche-task2-2022-stance-dev.qrels"
    stances.write_text(f"1 0 p1 FIRST\n1 0 p3 {label}\n2 0 p4 NO\n", encoding="utf-8")
    with pytest.raises(ToucheError, match=rf"topic 1, document p3 is judged {re.escape(repr(label))}, no comparative "
                                          r"stance label \(FIRST, SECOND, NEUTRAL, NO\)"):
        common.read_dev_stances(tmp_path / "data")
    stances.write_text("1 0 p1 FIRST\n1 0 p3 NEUTRAL\n", encoding="utf-8")
    assert common.read_dev_stances(tmp_path / "data") == {("1", "p1"): "FIRST", ("1", "p3"): "NEUTRAL"}


@pytest.mark.parametrize("module, argv, flag", [("fusion", [], "DATA_DIR (the first argument)"),
                                                ("stance", ["--data-dir"], "--data-dir DIR")])
def test_a_training_module_run_alone_names_its_own_way_to_pass_the_data(tmp_path, capsys, module, argv, flag):
    """`python -m app.training.fusion` said "pass --data DIR", a flag it rejects: it takes the folder positionally."""
    with pytest.raises(SystemExit) as stop:
        import_module(f"app.training.{module}").cli([*argv, str(tmp_path / "absent")])
    assert stop.value.code == 1
    assert capsys.readouterr().err.strip().endswith(f"; pass {flag} holding the files docs/DATA.md lists")
