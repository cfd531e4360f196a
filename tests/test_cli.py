"""The CLI's own duties: where input and output come from, and one-line errors with nothing written."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import app.cli as cli
from app.cli import INPUT_VARIABLES, OUTPUT_VARIABLES, app, main, resolve_dir, resolve_io
from app.errors import ToucheError

runner = CliRunner()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in INPUT_VARIABLES + OUTPUT_VARIABLES + (cli.IMAGE_VARIABLE,):
        monkeypatch.delenv(name, raising=False)


def test_flag_wins_then_tira_variables_in_order(monkeypatch):
    monkeypatch.setenv("TIRA_INPUT_DIRECTORY", "/old")
    assert resolve_dir(None, INPUT_VARIABLES) == Path("/old")
    monkeypatch.setenv("TIRA_INPUT_DATASET", "/tira")
    assert resolve_dir(None, INPUT_VARIABLES) == Path("/tira")
    monkeypatch.setenv("inputDataset", "/current")
    assert resolve_dir(None, INPUT_VARIABLES) == Path("/current")
    assert resolve_dir(Path("/flag"), INPUT_VARIABLES) == Path("/flag")
    monkeypatch.setenv("inputDataset", "")
    assert resolve_dir(None, INPUT_VARIABLES) == Path("/tira")


@pytest.mark.parametrize("files, message", [
    ({}, "no topics"),
    ({"topics.xml": "<topics><topic><number>1</number><title>t</title></topic></topics>"}, "no corpus"),
    ({"topics.xml": "<topics><topic>", "passages.jsonl": '{"id": "a", "contents": "b"}'}, "malformed XML"),
    ({"topics.xml": "<topics><topic><number>1</number><title>t</title></topic></topics>",
      "passages.jsonl": "garbage\n"}, "no line holds a JSON object"),
])
def test_bad_input_is_one_line_nonzero_and_writes_nothing(tmp_path, files, message):
    """Nor does it leave the output directories it made (an empty one was left behind)."""
    inputs, outputs = tmp_path / "in", tmp_path / "out" / "deeper"
    inputs.mkdir()
    for name, content in files.items():
        (inputs / name).write_text(content)
    result = runner.invoke(app, ["run", "-i", str(inputs), "-o", str(outputs), "--quiet"])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("touche:")]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "kept").write_text("the user's")
    assert runner.invoke(app, ["run", "-i", str(inputs), "-o", str(tmp_path / "out"), "--quiet"]).exit_code == 1
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["kept"]
    (tmp_path / "existing").mkdir()  # "new/../existing" made "new" only: the empty "existing" was removed instead
    assert runner.invoke(app, ["run", "-i", str(inputs), "-o", str(tmp_path / "new" / ".." / "existing"),
                               "--quiet"]).exit_code == 1
    assert (tmp_path / "existing").is_dir() and not (tmp_path / "new").exists()


FIXTURES = Path(__file__).parent / "fixtures"


def two_corpora(tmp_path: Path) -> Path:
    """300 words of passages beside a one-argument args.me file: the input the issue found ranked silently."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("topics.xml", "passages.jsonl"):
        (inputs / name).write_bytes((FIXTURES / "passages" / name).read_bytes())
    (inputs / "args-me.json").write_text('{"arguments": [{"id": "a1", "conclusion": "Cats are better pets.", '
                                         '"premises": [{"text": "Cats are quiet.", "stance": "PRO"}]}]}')
    return inputs


def test_two_corpora_are_one_line_naming_both_and_how_to_choose(tmp_path):
    inputs, outputs = two_corpora(tmp_path), tmp_path / "out"
    result = runner.invoke(app, ["run", "-i", str(inputs), "-o", str(outputs), "--quiet"])
    assert result.exit_code == 1
    assert result.stderr.strip() == (f"touche: error: two corpora in {inputs}: args-me.json and passages.jsonl; "
                                     "choose one with --corpus args-me.json or --corpus passages.jsonl")
    assert not (outputs / "run.txt").exists()


@pytest.mark.slow
def test_corpus_chooses_the_file_and_the_log_names_the_one_ignored(tmp_path):
    inputs, outputs = two_corpora(tmp_path), tmp_path / "out"
    result = runner.invoke(app, ["run", "-i", str(inputs), "-o", str(outputs), "--corpus", "passages.jsonl",
                                 "--no-metadata"])
    assert result.exit_code == 0, result.stderr
    assert "ranking passages.jsonl (--corpus); ignoring args-me.json" in result.stderr
    assert "BM25 index" not in result.stderr  # no progress bar where stderr is no terminal: TIRA's log is a file
    ranked = {line.split()[2] for line in (outputs / "run.txt").read_text().splitlines()}
    assert len(ranked) > 1 and "a1" not in ranked


@pytest.mark.slow
def test_topics_reads_a_topics_file_of_another_name(tmp_path):
    """Touché releases topics as topics-task-1-2020.xml: beside args-me.json it was "no topics", with no way round."""
    inputs, outputs = two_corpora(tmp_path), tmp_path / "out"
    (inputs / "passages.jsonl").unlink()
    (inputs / "topics.xml").rename(inputs / "topics-task-1-2020.xml")
    result = runner.invoke(app, ["run", "-i", str(inputs), "-o", str(outputs), "--quiet"])
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("; to read topics-task-1-2020.xml, pass --topics topics-task-1-2020.xml")
    result = runner.invoke(app, ["run", "-i", str(inputs), "-o", str(outputs), "--topics", "topics-task-1-2020.xml",
                                 "--no-metadata", "--quiet"])
    assert result.exit_code == 0, result.stderr
    assert {line.split()[2] for line in (outputs / "run.txt").read_text().splitlines()} == {"a1"}


def test_corpus_cannot_go_with_chatnoir(tmp_path):
    result = runner.invoke(app, ["run", "-i", str(tmp_path), "-o", str(tmp_path / "out"), "--corpus",
                                 "passages.jsonl", "--backend", "chatnoir"])
    assert result.exit_code == 1 and "cannot go with --backend chatnoir" in result.stderr


def test_missing_input_directory_and_bad_options(tmp_path):
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "nope"), "-o", str(tmp_path)])
    assert result.exit_code == 1 and "does not exist" in result.stderr
    result = runner.invoke(app, ["run", "-i", str(tmp_path), "-o", str(tmp_path), "--stance-depth", "-1"])
    assert result.exit_code == 2 and not (tmp_path / "run.txt").exists()


def test_an_input_path_with_a_space_at_its_end_is_named_quoted(tmp_path, monkeypatch):
    """`inputDataset="/data/in "` read "input directory /data/in does not exist" of a directory that does."""
    (tmp_path / "in").mkdir()
    monkeypatch.setenv("inputDataset", f"{tmp_path / 'in'} ")
    result = runner.invoke(app, ["run", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert f"input directory {str(tmp_path / 'in') + ' '!r} does not exist" in result.stderr


def test_what_would_fail_the_write_fails_before_the_work(tmp_path, monkeypatch):
    """A bad tag, a CUDA device torch cannot see, a cache that is a file or lies in the output, balancing labels
    left out: one line, at once."""
    import app.pipeline as pipeline

    monkeypatch.setattr(pipeline, "run", lambda settings: pytest.fail("the run started"))
    (tmp_path / "in").mkdir()
    (tmp_path / "a-file").write_text("")
    base = ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out")]
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    for flags, message in ((["--tag", "my tag"], "must be one word"),
                           (["--device", "cuda"], "sees no CUDA device"),
                           (["--cache-dir", str(tmp_path / "a-file")], "is a file"),
                           (["--cache-dir", str(tmp_path / "a-file" / "touche")], "cannot be made: "),
                           (["--cache-dir", str(tmp_path / "out" / "cache")], "lies in the output"),
                           (["--balance-stance", "--no-stance"], "which --no-stance leaves out")):
        result = runner.invoke(app, base + flags)
        assert result.exit_code == 1 and message in result.stderr, flags
        assert len(result.stderr.strip().splitlines()) == 1
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "in" / ".")])
    assert result.exit_code == 1 and "is the input directory: pass another to -o/--output" in result.stderr


def test_an_output_on_no_mount_in_the_image_is_said_before_the_work_to_be_lost(tmp_path, monkeypatch):
    """In the image, `-o o2` (relative) or a mistyped mount point wrote the run inside the container, without a word:
    `--rm` removed it."""
    import app.pipeline as pipeline

    monkeypatch.setattr(pipeline, "run", lambda settings: pytest.fail("the run started"))
    mounted = tmp_path / "out"
    monkeypatch.setattr(cli, "mount_point", lambda path: os.path.realpath(path) == os.path.realpath(mounted))
    assert not cli.lost_with_the_container(tmp_path / "o2")  # outside the image
    monkeypatch.setenv(cli.IMAGE_VARIABLE, "1")
    assert cli.lost_with_the_container(tmp_path / "o2") and not cli.lost_with_the_container(mounted / "a" / "b")
    (tmp_path / "in").mkdir()
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "o2"), "--balance-stance",
                                 "--no-stance"])
    warning, error = result.stderr.strip().splitlines()
    assert "o2 lies in the container, where nothing is mounted: the run is lost with it" in warning
    assert result.exit_code == 1 and "--no-stance leaves out" in error


def test_errors_name_the_variable_a_directory_came_from(tmp_path, monkeypatch):
    import app.pipeline as pipeline

    monkeypatch.setattr(pipeline, "run", lambda settings: pytest.fail("the run started"))
    (tmp_path / "in").mkdir()
    (tmp_path / "a-file").write_text("")
    for name in OUTPUT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("outputDir", str(tmp_path / "a-file"))
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in")])
    assert result.exit_code == 1 and "pass a directory to -o/--output (it came from $outputDir)" in result.stderr
    for name in INPUT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("inputDataset", str(tmp_path / "a-file"))
    result = runner.invoke(app, ["run", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "corpus to -i/--input (it came from $inputDataset)" in result.stderr
    monkeypatch.setenv("inputDataset", str(tmp_path / "nowhere"))
    result = runner.invoke(app, ["run", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "pass an existing one to -i/--input (it came from $inputDataset)" in result.stderr
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "out"))
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "choose another --cache-dir (it came from $XDG_CACHE_HOME)" in result.stderr
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))  # ran uncached, with two warnings
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "is a file; pass a directory to --cache-dir (it came from $XDG_CACHE_HOME)" \
        in result.stderr


def test_a_cache_directory_that_cannot_be_reached_names_its_variable(tmp_path, monkeypatch):
    """$XDG_CACHE_HOME in another user's home: stat says permission denied, which named no variable."""
    import errno
    denied = tmp_path / "other-home"
    exists = Path.exists

    def guarded(path):
        if denied in path.parents:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return exists(path)

    monkeypatch.setattr(Path, "exists", guarded)
    monkeypatch.setenv("XDG_CACHE_HOME", str(denied / ".cache"))
    from app.pipeline import DEMO_INPUT
    result = runner.invoke(app, ["run", "-i", str(DEMO_INPUT), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and not (tmp_path / "out").exists()
    assert "cannot be reached (permission denied): pass a directory you may use to --cache-dir (it came from " \
        "$XDG_CACHE_HOME)" in result.stderr


def test_a_cache_directory_that_cannot_be_written_is_said_before_the_work(tmp_path, monkeypatch, caplog):
    """A read-only cache was said only after the index build and the encoding (an hour on a large corpus), and the
    next run silently computed it all again. A filled read-only cache still serves, so it is a warning."""
    import os

    from app.cli import check_cache_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    check_cache_dir(cache, tmp_path / "out", "--cache-dir (it came from $XDG_CACHE_HOME)")
    assert not caplog.text
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != cache)
    check_cache_dir(cache, tmp_path / "out", "--cache-dir (it came from $XDG_CACHE_HOME)")
    assert (f"cache directory {cache} cannot be written (permission denied): what this run computes is not kept for "
            "the next; pass a writable directory to --cache-dir (it came from $XDG_CACHE_HOME)") in caplog.text


def test_a_cache_directory_on_a_full_disk_is_said_before_the_work(tmp_path, monkeypatch, caplog):
    """It was said at the index's save, after the build, as numpy's "4327 requested and 2016 written" (an attack)."""
    import os

    from app.cli import check_cache_dir

    real_statvfs = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda path: real_statvfs(path) if Path(path) != tmp_path else
                        os.statvfs_result((4096, 4096, 100, 0, 0, 10, 0, 0, 0, 255, 0)))
    check_cache_dir(tmp_path / "cache", tmp_path / "out")
    assert (f"cache directory {tmp_path / 'cache'}: no space left on device: what this run computes is not kept for "
            "the next; pass a directory on a disk with room to --cache-dir") in caplog.text


def test_a_previous_stages_run_tira_mounts_is_said_to_be_ignored(tmp_path, monkeypatch):
    """$inputRun was passed over without a word."""
    from app.pipeline import DEMO_INPUT

    monkeypatch.setenv("inputRun", "/tira-data/input-run")
    result = runner.invoke(app, ["run", "-i", str(DEMO_INPUT), "-o", str(tmp_path / "out"), "--device", "cuda"])
    assert result.exit_code == 1  # no CUDA here: stopped before any work, the warning said first
    assert "ignoring $inputRun (/tira-data/input-run): this software takes its candidates" in result.stderr


def test_a_run_in_a_process_holding_huggingface_hub_alone_says_its_error(tmp_path):
    """huggingface_hub's `utils` is a lazy attribute: switching its bars off (stderr no terminal) raised
    AttributeError, and a missing input was "No huggingface_hub attribute utils" with nothing on stderr."""
    code = ("import sys, huggingface_hub; from typer.testing import CliRunner; from app.cli import app; "
            "r = CliRunner().invoke(app, ['run', '-i', sys.argv[1], '-o', sys.argv[2]]); "
            "print(r.exit_code, repr(r.exception), r.stderr)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "missing"), str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.stdout.startswith("1 SystemExit(1)") and "does not exist" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("options, said", [
    (["--stance-model", "head", "--stance-depth", "30"],
     "--stance-depth 30 is how many documents the stance cross-encoder reads, which --stance-model head leaves out"),
    (["--no-stance", "--stance-depth", "30"], "--stance-depth 30 is how many documents the stance cross-encoder "
                                              "reads, which --no-stance leaves out: ignored"),
    (["--no-stance", "--stance-model", "head"], "--stance-model head picks how stance is read, which --no-stance "
                                                "leaves out: ignored"),
])
def test_stance_options_others_leave_without_effect_are_said_to_be_ignored(tmp_path, options, said):
    """--stance-depth beside --stance-model head was passed over without a word: the run read as asked, not as meant."""
    from app.pipeline import DEMO_INPUT

    result = runner.invoke(app, ["run", "-i", str(DEMO_INPUT), "-o", str(tmp_path / "out"), "--device", "cuda",
                                 *options])
    assert result.exit_code == 1  # no CUDA here: stopped before any work, the warning said first
    assert said in result.stderr.replace("\n", " ")


def test_stance_options_that_take_effect_are_not_said_to_be_ignored(tmp_path):
    from app.pipeline import DEMO_INPUT

    result = runner.invoke(app, ["run", "-i", str(DEMO_INPUT), "-o", str(tmp_path / "out"), "--device", "cuda",
                                 "--stance-depth", "30", "--stance-model", "cross"])
    assert result.exit_code == 1
    assert "ignored" not in result.stderr


def test_a_relative_xdg_cache_home_is_ignored_as_the_specification_asks(monkeypatch, caplog):
    """It put the cache under whatever directory the run was started in."""
    import os

    from app.cli import CACHE_VARIABLES, _ignore_relative

    monkeypatch.setenv("XDG_CACHE_HOME", "relx")
    _ignore_relative(CACHE_VARIABLES)
    assert "XDG_CACHE_HOME" not in os.environ
    assert "ignoring $XDG_CACHE_HOME=relx: not an absolute path" in caplog.text
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache")
    _ignore_relative(CACHE_VARIABLES)
    assert os.environ["XDG_CACHE_HOME"] == "/var/cache"


def test_stance_depth_help_names_the_pipelines_default():
    from app.settings import STANCE_DEPTH

    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert f"(default {STANCE_DEPTH})" in " ".join(result.stdout.split())


@pytest.mark.parametrize("command", [["run"], ["validate"], ["evaluate"], ["report"], ["classify"],
                                     ["train", "stance"]])
def test_help_cuts_no_word_to_an_ellipsis_at_80_columns(command):
    """At 80 columns (a pipe's width, `touche run --help | less`) rich cut `--no-balance-stance` and the cache's
    default path to an ellipsis."""
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0 and "\N{HORIZONTAL ELLIPSIS}" not in result.stdout
    # the trainers' defaults are in the checkout, cut where its path is long (/tmp/some/longer/clone/...)
    assert str(cli.DATA_DIR.parent) not in result.stdout and str(cli.MODELS_DIR.parent) not in result.stdout


def test_mounted_in_and_out_are_read_when_nothing_is_set(tmp_path, monkeypatch):
    # `docker run -v input:/in -v out:/out IMAGE` with no arguments
    mounted_in, mounted_out, demo = tmp_path / "in", tmp_path / "out", tmp_path / "demo"
    monkeypatch.setattr(cli, "MOUNTED_INPUT", mounted_in)
    monkeypatch.setattr(cli, "MOUNTED_OUTPUT", mounted_out)
    monkeypatch.setattr(cli, "mount_point", lambda path: True)  # these directories stand for mounts
    assert resolve_io(None, None, demo) == (demo, Path("out/demo"))  # nothing mounted: the demo
    mounted_out.mkdir()
    assert resolve_io(None, None, demo) == (demo, mounted_out)  # only /out: the demo's run goes there
    mounted_in.mkdir()
    assert resolve_io(None, None, demo) == (mounted_in, mounted_out)
    assert resolve_io(None, tmp_path / "o", demo) == (mounted_in, tmp_path / "o")
    monkeypatch.setenv("inputDataset", str(tmp_path / "tira"))
    monkeypatch.setenv("outputDir", str(tmp_path / "tira-out"))
    assert resolve_io(None, None, demo) == (tmp_path / "tira", tmp_path / "tira-out")  # TIRA's variables win


def test_a_mounted_in_without_a_mounted_out_is_an_error_not_a_run_lost_with_the_container(tmp_path, monkeypatch):
    """`docker run -v input:/in IMAGE` wrote the run into the container's own /out, gone with `--rm`."""
    from app.files import mount_point

    monkeypatch.setattr(cli, "MOUNTED_INPUT", tmp_path / "in")
    monkeypatch.setattr(cli, "MOUNTED_OUTPUT", tmp_path / "out")
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()  # a directory of the image, nothing mounted on it
    assert mount_point(Path("/")) and not mount_point(tmp_path / "out")
    with pytest.raises(ToucheError, match=re.escape(f"nothing is mounted at {tmp_path / 'out'} to keep the run")):
        resolve_io(None, None, tmp_path / "demo")
    assert resolve_io(None, tmp_path / "o", tmp_path / "demo") == (tmp_path / "in", tmp_path / "o")
    (tmp_path / "in").rmdir()  # the demo goes to out/demo, not to an unmounted /out
    assert resolve_io(None, None, tmp_path / "demo") == (tmp_path / "demo", Path("out/demo"))
    monkeypatch.setattr(cli, "mount_point", lambda path: path == tmp_path / "out")
    assert resolve_io(None, None, tmp_path / "demo") == (tmp_path / "demo", tmp_path / "out")


@pytest.mark.parametrize("variables, error", [
    ({"inputDataset": "", "outputDir": "o"}, "$inputDataset is set but empty"),
    ({"TIRA_INPUT_DATASET": " "}, "$TIRA_INPUT_DATASET is set but empty"),
    ({"outputDir": "o"}, "$outputDir names the output but no input is given"),
])
def test_a_tira_job_without_its_input_is_an_error_not_the_demo(tmp_path, monkeypatch, variables, error):
    """The demo's valid run handed to TIRA as the run on its data would be the worst outcome of a lost variable."""
    monkeypatch.setattr(cli, "MOUNTED_INPUT", tmp_path / "in")
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ToucheError, match=re.escape(error)):
        resolve_io(None, None, tmp_path / "demo")
    (tmp_path / "in").mkdir()  # a mounted /in is an input, as before
    (tmp_path / "out").mkdir()
    monkeypatch.setattr(cli, "MOUNTED_OUTPUT", tmp_path / "out")
    monkeypatch.setattr(cli, "mount_point", lambda path: True)
    assert resolve_io(None, None, tmp_path / "demo")[0] == tmp_path / "in"


def test_the_demo_says_where_its_run_goes(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(cli, "MOUNTED_INPUT", tmp_path / "none")
    monkeypatch.setattr(cli, "MOUNTED_OUTPUT", tmp_path / "none")
    resolve_io(None, tmp_path / "o", tmp_path / "demo")
    assert f"running the bundled demo input {tmp_path / 'demo'} into {tmp_path / 'o'}" in caplog.text


def test_caches_go_to_xdg_cache_home_never_the_output(monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/me")
    assert resolve_dir(None, cli.CACHE_VARIABLES, "touche") == Path("/var/cache/me/touche")
    assert resolve_dir(Path("/flag"), cli.CACHE_VARIABLES, "touche") == Path("/flag")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert resolve_dir(None, cli.CACHE_VARIABLES, "touche") is None  # the pipeline then uses a temporary directory


def test_output_directory_is_required_with_an_input(tmp_path):
    result = runner.invoke(app, ["run", "-i", str(tmp_path)])
    assert result.exit_code == 1 and "no output directory" in result.stderr


def test_validate_command_exit_codes(tmp_path):
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 d{r} {r} {9 - r}.0 t\n" for q in (1, 2, 3) for r in (1, 2)))
    ok = runner.invoke(app, ["validate", str(tmp_path)])
    assert ok.exit_code == 0 and ok.stdout.startswith("valid:")
    (tmp_path / "run.txt").write_text("1 Q0 d 1 x t\n")
    bad = runner.invoke(app, ["validate", str(tmp_path / "run.txt")])
    assert bad.exit_code == 1 and "not a number" in bad.stdout and "invalid:" in bad.stdout


def test_evaluate_prints_json(tmp_path):
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 0\n1 0 b 1\n")
    result = runner.invoke(app, ["evaluate", str(tmp_path), "--qrels", str(tmp_path / "qrels"), "--json"])
    assert result.exit_code == 0
    assert '"relevance nDCG@5 judged-only"' in result.stdout


def test_evaluate_prints_each_topic_in_the_means_order(tmp_path):
    """Each topic's measures were sorted by name (nDCG@10 before nDCG@5), the means in their own order."""
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 0\n1 0 b 1\n")
    result = runner.invoke(app, ["evaluate", str(tmp_path), "--qrels", str(tmp_path / "qrels"), "--per-topic"])
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [name for qid, name, _ in lines if qid == "1"] == [name for qid, name, _ in lines if qid == "all"]


def test_counts_are_printed_as_counts(tmp_path):
    lines = [f"{q} FIRST d{r} {r} {10 - r}.0 t" for q in (1, 2, 3) for r in (1, 2)]
    (tmp_path / "run.txt").write_text("".join(line + "\n" for line in lines[:5] + ["3 FIRST d2 2 9.5 t"]))
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "stance").write_text("1 0 d1 FIRST\n1 0 d2 SECOND\n")
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 1 and f"invalid: 1 problem in {tmp_path / 'run.txt'}" in result.stdout
    result = runner.invoke(app, ["evaluate", str(tmp_path), "--qrels", str(tmp_path / "qrels"), "--stance-qrels",
                                 str(tmp_path / "stance")])
    assert result.exit_code == 0 and "all\tstance judged documents\t2\n" in result.stdout
    assert "all\tstance macro-F1\t0.3333\n" in result.stdout


@pytest.mark.parametrize("args, says", [(["run", "--depth", "0"], "Invalid value for '--depth'"),
                                        (["run", "--no-such-flag"], "No such option: --no-such-flag"),
                                        (["validate"], "Missing argument 'path'"),
                                        (["run", "-i", "", "-o", "out"], "Invalid value for '-i' / '--input'"),
                                        (["run", "-o", " "], "Invalid value for '-o' / '--output': an empty path"),
                                        # TIRA's unquoted `-i $inputDataset -o $outputDir`, the first unset
                                        (["run", "-i", "-o", "/out"], "'-o' is an option, not a path"),
                                        (["evaluate", "run.txt", "--qrels", ""], "Invalid value for '--qrels'"),
                                        (["report", "a", "", "--qrels", "q"], "Invalid value for 'RUN...'"),
                                        # a value outside an option's choices, as an unknown option
                                        (["run", "--device", "tpu"], "'tpu' is not one of 'auto', 'cpu', 'cuda'"),
                                        (["run", "--precision", "int8"], "'int8' is not one of 'auto', 'fp32'"),
                                        (["run", "--stance-model", "big"], "'big' is not one of 'cross', 'head'"),
                                        (["run", "--task", "both"], "'both' is not one of 'comparative', 'contro"),
                                        (["run", "--backend", "web"], "'web' is not one of 'auto', 'local', 'chat"),
                                        (["run", "--page-text", "all"], "'all' is not one of 'main', 'full'"),
                                        (["validate", "run.txt", "--task", "both"], "Invalid value for '--task'"),
                                        (["classify", "--method", "neural", "A or B?"], "for '--method'"),
                                        # nothing to classify (it was exit 1, after the classifier loaded)
                                        (["classify"], "no questions: pass them as arguments or with --file")])
def test_a_usage_error_is_one_line_with_exit_status_2(capsys, args, says):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and err.startswith("touche: error: ") and says in err
    assert f"(see 'touche {args[0]} --help')" in err


def test_an_option_missing_its_value_is_one_line_and_no_arguments_show_only_the_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--tag"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err == "touche: error: Option '--tag' requires an argument.\n"
    with pytest.raises(SystemExit) as exit_:
        main([])
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and "Usage" in out + err and "touche: error" not in out + err


def test_the_command_exits_with_its_commands_status(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "-i", str(tmp_path / "nope"), "-o", str(tmp_path)])
    assert exit_.value.code == 1 and "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0 and "Usage" in capsys.readouterr().out


def test_an_address_space_too_small_for_any_command_is_one_line(tmp_path):
    """Between about 240 and 280 MB (ulimit -v) scipy's OpenBLAS retried its allocation for ever as it loaded."""
    import resource

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (300 * 2**20, resource.RLIM_INFINITY))

    result = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "evaluate", "run.txt",
                             "--qrels", "q"], capture_output=True, text=True, timeout=120, preexec_fn=limited,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert result.returncode == 1 and result.stderr.startswith("touche: error: the address space is limited to 314 MB")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("failure", [MemoryError, KeyboardInterrupt])
def test_a_command_whose_modules_fail_to_load_says_so_in_one_line(monkeypatch, failure):
    """The imports came before the error handling: a memory limit or a Ctrl-C while they loaded was a traceback."""

    class Failing:
        def find_spec(self, name, path=None, target=None):
            if name == "app.evaluate":
                raise failure()

    monkeypatch.delitem(sys.modules, "app.evaluate", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Failing(), *sys.meta_path])
    result = runner.invoke(app, ["evaluate", "run.txt", "--qrels", "q"])
    expected = ("touche: error: out of memory (a memory limit such as ulimit -v, or the machine's)\n"
                if failure is MemoryError else "touche: interrupted\n")
    assert (result.exit_code, result.stderr) == (1 if failure is MemoryError else 130, expected)


def test_a_deleted_working_directory_is_one_line_before_any_work(tmp_path):
    import sys

    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -c "from app.cli import main; main()" run'
    result = subprocess.run(["sh", "-c", script + f' -i "{tmp_path}" -o "{tmp_path / "out"}"'],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert result.returncode == 1
    assert result.stderr == "touche: error: the working directory no longer exists: run touche from one that does\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["validate", "run.txt"], ["evaluate", "run.txt", "--qrels", "q"],
                                     ["report", "run.txt", "--qrels", "q"], ["classify", "Is A better?"],
                                     ["train", "quality", "--data", "data"]])
def test_every_command_gives_the_traceback_its_internal_errors_point_to(monkeypatch, command):
    """An internal error says "run with --debug for the traceback": every command takes --debug."""
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    for module, name in (("app.runfile", "validate_run"), ("app.evaluate", "evaluate_run"),
                         ("app.report", "build_report"), ("app.questions", "load_classifier"),
                         ("app.training.common", "require_data")):
        monkeypatch.setattr(f"{module}.{name}", broken)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 1
    assert result.stderr.strip() == ("touche: internal error: RuntimeError: a bug (run with --debug for the "
                                     "traceback)")
    result = CliRunner().invoke(app, [*command, "--debug"])
    assert isinstance(result.exception, RuntimeError)


def test_a_path_that_starts_with_a_dash_is_a_path_when_it_exists(tmp_path, monkeypatch):
    from app.cli import given_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "-data").mkdir()
    assert given_path("-data") == Path("-data")
    with pytest.raises(typer.BadParameter, match="'-o' is an option, not a path"):
        given_path("-o")


def test_no_writable_temporary_directory_is_one_line_before_the_work(tmp_path, monkeypatch):
    """With /tmp, /var/tmp and the working directory read-only it was "no such file or directory", and with
    --cache-dir only after the BM25 index was built (torch's import needs one)."""
    import tempfile

    import app.pipeline as pipeline

    def none_usable():
        raise FileNotFoundError(2, "No usable temporary directory found in ['/tmp', '/var/tmp']")

    monkeypatch.setattr(pipeline, "run", lambda settings: pytest.fail("the run started"))
    monkeypatch.setattr(tempfile, "gettempdir", none_usable)
    (tmp_path / "in").mkdir()
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "no writable temporary directory" in result.stderr
    assert "set TMPDIR to one" in result.stderr and not (tmp_path / "out").exists()


def test_a_symbolic_link_loop_and_running_out_of_memory_are_errors_not_internal_ones(tmp_path, monkeypatch):
    import app.pipeline as pipeline

    (tmp_path / "in").mkdir()
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "loop")])
    assert result.exit_code == 1
    assert result.stderr.startswith("touche: error: ") and "symbolic link loop" in result.stderr
    for failure in (MemoryError(), RuntimeError("[enforce fail at alloc_cpu.cpp:127] data. DefaultCPUAllocator: "
                                                "can't allocate memory: you tried to allocate 1048576 bytes."),
                    ImportError("libtorch_cpu.so: failed to map segment from shared object"),  # ulimit -v 800000
                    RuntimeError("could not create a primitive")):  # oneDNN's, under ulimit -v 1500000
        def out_of_memory(settings, failure=failure):
            raise failure

        monkeypatch.setattr(pipeline, "run", out_of_memory)
        result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--no-metadata"])
        assert result.exit_code == 1 and result.stderr.startswith("touche: error: out of memory"), result.stderr
    def unsupported(settings):  # oneDNN's words for bf16 on a CPU without it: no memory limit
        raise RuntimeError("could not create a primitive descriptor for a matmul primitive")

    monkeypatch.setattr(pipeline, "run", unsupported)
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--no-metadata"])
    assert result.exit_code == 1 and result.stderr.startswith("touche: internal error: RuntimeError"), result.stderr

    def no_threads(settings):  # `docker run --pids-limit 4`: an internal error
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(pipeline, "run", no_threads)
    result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--no-metadata"])
    assert result.exit_code == 1 and result.stderr.startswith(
        "touche: error: cannot start a thread (a limit on processes such as ulimit -u"), result.stderr


def test_an_os_error_of_the_run_is_not_the_outputs_and_debug_shows_it(tmp_path, monkeypatch):
    """main() reports results that cannot be printed; an OSError of the run itself must reach --debug's traceback."""
    import errno

    import app.pipeline as pipeline

    def full_disk(settings):
        raise OSError(errno.ENOSPC, "No space left on device", str(settings.output_dir / "run.txt"))

    monkeypatch.setattr(pipeline, "run", full_disk)
    (tmp_path / "in").mkdir()
    with pytest.raises(OSError, match="No space left"):
        main(["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--no-metadata", "--debug"])


def test_stops_after_success_and_after_the_first_stop_are_ignored(monkeypatch):
    """A finished command's teardown (a second after torch) is no time to be stopped: a stop then left a complete
    run with exit 143. A second SIGTERM or SIGHUP must not cut short the cleanup of the first."""
    import signal

    saved = {stop: signal.getsignal(stop) for stop in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        with pytest.raises(cli.Terminated):
            cli._raise_terminated(signal.SIGHUP, None)
        assert signal.getsignal(signal.SIGTERM) == signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        for stop, handler in saved.items():
            signal.signal(stop, handler)
        monkeypatch.setattr(sys, "argv", ["touche", "classify", "Is tea better than coffee?"])  # as the command
        with pytest.raises(SystemExit) as done:
            main()
        assert done.value.code == 0
        assert all(signal.getsignal(stop) == signal.SIG_IGN for stop in saved)
    finally:
        for stop, handler in saved.items():
            signal.signal(stop, handler)


def test_a_stop_that_cuts_a_progress_bar_short_is_said_on_a_line_of_its_own(capsys):
    """A bar not yet closed when a stop came (under load, in a test run) ran into the last line:
    "BM25 index: 0doc [00:00, ?doc/s]touche: terminated"."""
    import signal

    import typer
    from tqdm import tqdm

    with pytest.raises(typer.Exit) as done:
        with cli._errors(debug=False):
            bar = tqdm(desc="BM25 index", unit="doc", file=sys.stderr, disable=False)  # made, not yet closed
            raise cli.Terminated(signal.SIGTERM)
    assert done.value.exit_code == 143
    assert capsys.readouterr().err.splitlines()[-1] == "touche: terminated"
    bar.close()


def test_an_output_that_is_the_input_bind_mounted_elsewhere_is_the_input(tmp_path, monkeypatch):
    """`docker run -v data:/in -v data:/out` (or `mount --bind`): the paths differ, the directory is one, and the
    run was written into the data."""

    import app.pipeline as pipeline

    monkeypatch.setattr(pipeline, "run", lambda settings: pytest.fail("the run started"))
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    if subprocess.run(["mount", "--bind", str(tmp_path / "in"), str(tmp_path / "out")],
                      capture_output=True).returncode != 0:
        pytest.skip("bind mounts need root here")
    try:
        result = runner.invoke(app, ["run", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out")])
        assert result.exit_code == 1 and "is the input directory: pass another to -o/--output" in result.stderr
    finally:
        subprocess.run(["umount", str(tmp_path / "out")], check=True)
    assert list((tmp_path / "in").iterdir()) == []


@pytest.mark.parametrize("module", ["app", "app.cli"])
def test_python_dash_m_runs_the_command(module, tmp_path):
    """`python -m app.cli validate` did nothing and exited 0, so a script calling it scored a stale run."""
    (tmp_path / "run.txt").write_text("1 Q0 d1 1 1.0 tag\n")
    result = subprocess.run([sys.executable, "-m", module, "validate", str(tmp_path / "run.txt")],
                            capture_output=True, text=True, cwd=Path(__file__).parents[1], timeout=120)
    assert result.returncode == 1 and "invalid: 2 problems" in result.stdout  # fewer lines and topics than TIRA takes
    assert subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                          cwd=Path(__file__).parents[1], timeout=120).stdout.lstrip().startswith("Usage: touche")
