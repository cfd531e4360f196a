"""The fault table: the real CLI on damaged and unusual inputs, and runs killed mid-way.

Each case asserts what a TIRA user sees: the exit code, one line on stderr for an error, no `run.txt` unless the run
succeeded, and every written run accepted by TIRA's own `check_format` (the `tira` package is the oracle).
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tira.check_format import check_format

FIXTURES = Path(__file__).parent / "fixtures"
TOUCHE = shutil.which("touche", path=str(Path(sys.executable).parent)) or shutil.which("touche")


def touche(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([TOUCHE, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TQDM_DISABLE": "1", **(env or {})})


def tira_accepts(output: Path) -> bool:
    status, _ = check_format(output, "run.txt")
    return str(getattr(status, "name", status)) == "OK"


def passages_input(tmp_path: Path, extra: list[bytes], gzipped: bool = False) -> Path:
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(FIXTURES / "passages" / "topics.xml", inputs)
    data = (FIXTURES / "passages" / "passages.jsonl").read_bytes() + b"\n".join(extra) + b"\n"
    if gzipped:
        (inputs / "passages.jsonl.gz").write_bytes(gzip.compress(data))
    else:
        (inputs / "passages.jsonl").write_bytes(data)
    return inputs


def assert_one_line_error(done: subprocess.CompletedProcess, output: Path, *fragments: str) -> None:
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("touche: error: "), done.stderr
    assert all(fragment in lines[0] for fragment in fragments), lines[0]
    assert not (output / "run.txt").exists() and not (output / "ir-metadata.yml").exists()


# Lines a real corpus has: Latin-1 bytes, a cut multi-byte character, a lone surrogate escape, control characters,
# ids the run file cannot hold, broken JSON. Each costs its own line or character at most.
DAMAGED_LINES = [
    '{"id": "p-latin", "contents": "Caf\xe9 cats are better pets than dogs, na\xefve owners say."}'.encode("latin-1"),
    b'{"id": "p-cut", "contents": "Dogs are loyal pets \xe2\x82"}',
    b'{"id": "p-surrogate", "contents": "Tea \\ud800 is healthier than coffee"}',
    b'{"id": "p-control", "contents": "Trains\\u0000 beat\\u0013 planes\\u0018 in\\u0019 Europe"}',
    b'{"id": "p two", "contents": "an id with a space"}',
    b'{"id": "p-broken", "contents": "no closing brace"',
]


@pytest.mark.slow
def test_damaged_lines_cost_themselves_and_are_reported_once(tmp_path):
    inputs, output = passages_input(tmp_path, DAMAGED_LINES), tmp_path / "out"
    done = touche("run", "-i", str(inputs), "-o", str(output), "--quiet")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "passages.jsonl:" in line]
    assert len(warnings) == 1, done.stderr
    # the fixture's own defects (a broken line, a duplicate id, an empty text) and the two unusable lines above
    assert "skipped 5 records (3 bad lines, 1 duplicate id, 1 empty text)" in warnings[0]
    assert "replaced 3 undecodable bytes" in warnings[0]
    assert tira_accepts(output)
    assert {"p-latin", "p-surrogate", "p-control"} <= {line.split()[2] for line in (output / "run.txt").open()}
    assert sorted(path.name for path in output.iterdir()) == ["ir-metadata.yml", "run.txt"]  # no caches


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_gzip_corpus_is_one_line_and_no_run(tmp_path, damage):
    inputs, output = passages_input(tmp_path, [], gzipped=True), tmp_path / "out"
    data = (inputs / "passages.jsonl.gz").read_bytes()
    (inputs / "passages.jsonl.gz").write_bytes(data[: len(data) // 2] if damage == "truncated"
                                               else data[:10] + bytes(len(data) - 10))
    done = touche("run", "-i", str(inputs), "-o", str(output), "--quiet")
    assert_one_line_error(done, output, "passages.jsonl.gz", "truncated or corrupt gzip file")


def test_a_truncated_argsme_file_is_one_line_and_no_run(tmp_path):
    inputs, output = tmp_path / "in", tmp_path / "out"
    shutil.copytree(FIXTURES / "argsme", inputs)
    raw = (inputs / "args-me.json").read_bytes()
    (inputs / "args-me.json").write_bytes(raw[: len(raw) // 2])
    done = touche("run", "-i", str(inputs), "-o", str(output), "--quiet")
    assert_one_line_error(done, output, "args-me.json: truncated: the JSON ends after argument")


@pytest.mark.slow
def test_a_run_tira_would_reject_is_written_with_a_warning(tmp_path):
    inputs, output = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    (inputs / "topics.xml").write_text("<topics><topic><number>1</number><title>Are cats better pets than dogs?"
                                       "</title></topic></topics>")
    (inputs / "passages.jsonl").write_text(
        "".join(json.dumps({"id": f"p{i}", "contents": f"Cats are better pets than dogs, reason {i}."}) + "\n"
                for i in range(3)))
    done = touche("run", "-i", str(inputs), "-o", str(output), "--quiet", "--no-metadata", "--candidates", "2")
    assert done.returncode == 0, done.stderr
    # Said before the work, from the topics and --candidates, and not again after it.
    assert [line[line.find("TIRA"):] for line in done.stderr.splitlines() if "TIRA will reject" in line] == [
        "TIRA will reject this run: 1 topic of at most 2 documents each: at most 2 lines; at least 5 are required",
        "TIRA will reject this run: the input has 1 topic; at least 3 are required"], done.stderr
    assert not tira_accepts(output)
    # What the first stage shows (a corpus of one passage for 3 topics) is said before the models load, not again.
    (inputs / "topics.xml").write_text("<topics>" + "".join(
        f"<topic><number>{n}</number><title>Are cats better pets than dogs?</title></topic>" for n in (1, 2, 3))
        + "</topics>")
    (inputs / "passages.jsonl").write_text(json.dumps({"id": "p0", "contents": "Cats are better than dogs."}) + "\n")
    done = touche("run", "-i", str(inputs), "-o", str(output), "--quiet", "--no-metadata", "--candidates", "2",
                  "--overwrite")
    assert [line[line.find("TIRA"):] for line in done.stderr.splitlines() if "TIRA will reject" in line] == [
        "TIRA will reject this run: the candidates give at most 3 lines; at least 5 are required"], done.stderr


@pytest.mark.slow
def test_rerank_lines_without_text_are_named_as_such(tmp_path):
    inputs, output = tmp_path / "in", tmp_path / "out"
    shutil.copytree(FIXTURES / "rerank", inputs)
    with (inputs / "rerank.jsonl").open("a") as rerank:  # a first stage that wrote ids and scores only
        for number, text in enumerate(([], None)):
            line = {"qid": "11", "query": "q", "docno": f"p-no-text-{number}", "rank": 9, "score": 0.5}
            rerank.write(json.dumps(line if text == [] else {**line, "text": text}) + "\n")
        rerank.write("not json\n")
    done = touche("run", "-i", str(inputs), "-o", str(output), "--quiet", "--no-metadata")
    assert done.returncode == 0, done.stderr
    assert "rerank.jsonl: skipped 3 records (1 bad line, 2 lines without text)" in done.stderr
    assert tira_accepts(output)


def test_an_empty_question_is_an_error():
    for questions in ([""], ["  ", "Is tea healthier than coffee?"], ["\u200b\ufeff"]):
        done = touche("classify", *questions)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.strip() == "touche: error: empty question: every question needs some text"


# --- the output side: problems with the output directory fail before any work, and a failed write is one line ----

def sandboxed(script: str, mounts: str) -> subprocess.CompletedProcess:
    """`script` (a shell line) in a private mount namespace after the shell lines `mounts`: as root, chmod does not
    make a directory read-only, a mount does. Skips where this machine refuses namespaces or mounts."""
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
                           capture_output=True, text=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip(f"no private mounts here ({probe.stderr.strip() if probe else 'no unshare'})")
    return subprocess.run(["unshare", "-rm", "sh", "-c", f"{mounts} && {script}"], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "TQDM_DISABLE": "1"})


def refuses_before_work(monkeypatch, args: list[str]):
    """The CLI in-process with the pipeline replaced by a tripwire: the check must come before any work."""
    from typer.testing import CliRunner

    from app import pipeline
    from app.cli import app as cli

    def tripwire(settings):
        raise AssertionError("the pipeline ran: the output was not checked first")

    monkeypatch.setattr(pipeline, "run", tripwire)
    return CliRunner().invoke(cli, ["run", "-i", str(FIXTURES / "passages"), *args, "--quiet"])


def test_an_output_path_that_is_a_file_is_refused_before_any_work(tmp_path, monkeypatch):
    output = tmp_path / "out"
    output.write_text("a file")
    result = refuses_before_work(monkeypatch, ["-o", str(output)])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (f"touche: error: output path {output} is a file, not a directory: pass a "
                                     "directory to -o/--output")
    assert output.read_text() == "a file"


@pytest.mark.parametrize("existing", ["run.txt", "run.txt.gz", "ir-metadata.yml"])
def test_an_existing_run_is_refused_before_any_work(tmp_path, monkeypatch, existing):
    (tmp_path / existing).write_text("an earlier run")
    result = refuses_before_work(monkeypatch, ["-o", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"touche: error: {tmp_path / existing} exists; pass --overwrite to replace it"


def test_a_read_only_output_directory_is_refused_before_any_work(tmp_path, monkeypatch):
    import tempfile

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system", str(kwargs.get("dir")))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    result = refuses_before_work(monkeypatch, ["-o", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (f"touche: error: cannot write to output directory {tmp_path}: read-only "
                                     "file system")


def test_a_read_only_mount_is_refused_before_any_work(tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    touche, inputs, out = (shlex.quote(str(path)) for path in (TOUCHE, FIXTURES / "passages", output))
    done = sandboxed(f"{touche} run -i {inputs} -o {out} --quiet",
                     f"mount --bind {out} {out} && mount -o remount,bind,ro {out}")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == f"touche: error: cannot write to output directory {output}: read-only file system"
    assert not any(output.iterdir())


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    # A tmpfs over the output directory, filled up: an empty probe file fits, and the run failed at its write,
    # after all its work; the probe's 64 kB do not fit, so it is said before the work.
    touche, inputs, out = (shlex.quote(str(path)) for path in (TOUCHE, FIXTURES / "passages", output))
    done = sandboxed(f"{touche} run -i {inputs} -o {out} --quiet",
                     f"mount -t tmpfs -o size=16k tmpfs {out} && (dd if=/dev/zero of={out}/fill bs=1k "
                     "2>/dev/null; true)")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == f"touche: error: cannot write to output directory {output}: no space left on device"
    assert not any(output.iterdir())  # the tmpfs is gone with its namespace; nothing reached the real directory


@pytest.mark.slow
def test_a_write_that_fails_mid_file_is_one_line_and_leaves_no_file(tmp_path, monkeypatch):
    """The run's bytes go to /dev/full: ENOSPC when they are flushed, after the temporary file exists."""
    from contextlib import contextmanager

    from typer.testing import CliRunner

    from app import runfile
    from app.cli import app as cli

    real = runfile.atomic_file

    @contextmanager
    def onto_a_full_disk(path, prefix, **options):
        with real(path, prefix, **options) as out:
            full = os.open("/dev/full", os.O_WRONLY)
            os.dup2(full, out.fileno())
            os.close(full)
            yield out

    monkeypatch.setattr(runfile, "atomic_file", onto_a_full_disk)
    result = CliRunner().invoke(cli, ["run", "-i", str(FIXTURES / "passages"), "-o", str(tmp_path), "--quiet"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (f"touche: error: cannot write run.txt to {tmp_path}: no "
                                                      "space left on device")
    assert list(tmp_path.iterdir()) == []  # no run.txt, no temporary file, no ir-metadata.yml


@pytest.mark.slow
def test_quiet_is_silent_on_a_clean_run(tmp_path):
    done = subprocess.run([TOUCHE, "run", "-i", str(Path(__file__).parents[1] / "app" / "demo"), "-o",
                           str(tmp_path), "--quiet", "--no-metadata"], capture_output=True, text=True, timeout=600,
                          env={name: value for name, value in os.environ.items() if "PROGRESS" not in name
                               and not name.startswith("TQDM_")})
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == ""
    assert (tmp_path / "run.txt").is_file()


# --- crash safety: a run killed at any point leaves no run.txt, and the next run on its caches is the same -------

# Runs the real CLI with one function wrapped to SIGKILL the process at a chosen point.
KILLER = """
import importlib, os, signal, sys
target = importlib.import_module("{module}")
for part in "{owner}".split(".") if "{owner}" else []:
    target = getattr(target, part)
original = getattr(target, "{name}")
calls = []

def killing(*args, **kwargs):
    calls.append(1)
    if len(calls) >= {after}:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)

setattr(target, "{name}", killing)
sys.argv = ["touche", *sys.argv[1:]]
from app.cli import main
main()
"""

KILL_POINTS = {  # module, owner within it, function, on which call
    # the encoder's forward pass over the first batch of candidates: no embedding saved
    "encoding": ("sentence_transformers.base.model", "BaseModel", "forward", 1),
    # the index cache, after the document ids are saved and before the index is marked complete
    "index build": ("numpy", "", "save", 1),
    # the run file, mid-way through its rows
    "write": ("app.runfile", "", "format_row", 5),
}


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory) -> bytes:
    output = tmp_path_factory.mktemp("undisturbed")
    done = touche("run", "-i", str(FIXTURES / "passages"), "-o", str(output), "--quiet", "--no-metadata")
    assert done.returncode == 0, done.stderr
    return (output / "run.txt").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_killed_run_leaves_no_run_and_the_next_run_is_the_same(tmp_path, point, undisturbed):
    module, owner, name, after = KILL_POINTS[point]
    output, cache = tmp_path / "out", tmp_path / "cache"
    args = ["run", "-i", str(FIXTURES / "passages"), "-o", str(output), "--cache-dir", str(cache), "--quiet"]
    killed = subprocess.run([sys.executable, "-c", KILLER.format(module=module, owner=owner, name=name, after=after), *args],
                            capture_output=True, text=True, timeout=600, env={**os.environ, "TQDM_DISABLE": "1"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not (output / "run.txt").exists() and not (output / "ir-metadata.yml").exists()

    again = touche(*args)
    assert again.returncode == 0, again.stderr
    assert (output / "run.txt").read_bytes() == undisturbed
    assert sorted(path.name for path in output.iterdir()) == ["ir-metadata.yml", "run.txt"]  # no leftovers


def test_python_dash_oo_is_one_line_before_the_work(tmp_path):
    """transformers reads its classes' docstrings at import: under -OO the run failed after the BM25 index."""
    output = tmp_path / "out"
    done = touche("run", "-i", str(passages_input(tmp_path, [])), "-o", str(output), env={"PYTHONOPTIMIZE": "2"})
    assert_one_line_error(done, output, "python -OO (PYTHONOPTIMIZE=2)", "unset PYTHONOPTIMIZE or set it to 1")
    assert not output.exists()
    done = touche("classify", "Is tea better than coffee?", env={"PYTHONOPTIMIZE": "2"})  # it embeds questions
    assert done.returncode == 1 and done.stderr.strip().endswith("unset PYTHONOPTIMIZE or set it to 1")
    done = touche("classify", "--method", "rules", "Is tea better than coffee?", env={"PYTHONOPTIMIZE": "2"})
    assert done.returncode == 0 and "comparative: tea | coffee" in done.stdout  # no transformers there


@pytest.mark.parametrize("stop, status, said", [(signal.SIGTERM, 143, "terminated"), (signal.SIGHUP, 129, "hung up")])
def test_a_stop_ends_the_run_in_one_line_and_removes_its_temporary_files(tmp_path, stop, status, said):
    """`docker stop` and batch systems send SIGTERM, a closed terminal or ssh session SIGHUP: the run's temporary
    cache (index, embeddings) and metadata directories go with it, as after Ctrl-C, and no run is left."""
    scratch, output = tmp_path / "tmp", tmp_path / "out"
    scratch.mkdir()
    running = subprocess.Popen([TOUCHE, "run", "-i", str(passages_input(tmp_path, [])), "-o", str(output)],
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TQDM_DISABLE": "1", "TMPDIR": str(scratch)},
                               preexec_fn=lambda: signal.signal(stop, signal.SIG_DFL))  # the tests' own nohup aside
    for line in running.stderr:  # the run's temporary cache is made before its topics are read
        if "topics from" in line:
            break
    assert list(scratch.glob("touche-cache-*"))
    running.send_signal(stop)
    rest = running.stderr.read()
    assert running.wait(timeout=120) == status, rest
    assert rest.strip().splitlines()[-1] == f"touche: {said}"
    # Only the run's own temporaries: torch may leave its compiler cache (torchinductor_USER) in TMPDIR.
    assert not list(scratch.glob("touche-*")) and not (output / "run.txt").exists()


def test_a_run_under_nohup_outlives_its_terminal(tmp_path):
    """nohup ignores SIGHUP; the handler that makes SIGHUP a stop must not undo that."""
    output = tmp_path / "out"
    running = subprocess.Popen(["nohup", TOUCHE, "run", "-i", str(passages_input(tmp_path, [])), "-o", str(output)],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                               env={**os.environ, "TQDM_DISABLE": "1"})
    for line in running.stderr:
        if "topics from" in line:
            break
    running.send_signal(signal.SIGHUP)
    rest = running.stderr.read()
    assert running.wait(timeout=300) == 0, rest
    assert tira_accepts(output)


# A child process whose pipeline writes a valid run.txt and is then stopped, as a stop in the second or two after the
# write (validation, the tracker's stop, ir-metadata.yml) arrives.
STOPPED_AFTER_THE_WRITE = """
import os, signal, sys
import app.pipeline
from app.pipeline import RunReport
from app.records import RunRow
from app.runfile import write_run

def stopped_after_the_write(settings):
    rows = [RunRow(qid, "Q0", f"new{rank}", rank, 3.0 - rank, "new") for qid in "123" for rank in (1, 2)]
    path = write_run(rows, settings.output_dir, settings.overwrite)
    os.kill(os.getpid(), signal.SIGTERM)
    return RunReport(path, 3, len(rows), 2)

def stopped_beside_another_run(settings):  # another process's run lands in the output; this one is stopped
    (settings.output_dir / "run.txt").write_text("another run\\n")
    (settings.output_dir / "ir-metadata.yml").write_text("another: run\\n")
    os.kill(os.getpid(), signal.SIGTERM)

app.pipeline.run = stopped_beside_another_run if os.environ.get("BESIDE") else stopped_after_the_write
from app.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("old", [{}, {"run.txt": "old run\n", "ir-metadata.yml": "old: run\n"},
                                 {"run.txt.gz": "old packed run\n", "ir-metadata.yml": "old: run\n"}],
                         ids=["none", "run.txt", "run.txt.gz"])
def test_a_run_stopped_after_its_write_leaves_the_old_run_as_it_was(tmp_path, old):
    """A stop just after run.txt was in place left it there, under --overwrite beside the old ir-metadata.yml that
    describes another run; then it removed both, and the old run was lost. A stopped run leaves the output as it
    found it."""
    output = tmp_path / "out"
    if old:
        output.mkdir()
        for name, text in old.items():
            (output / name).write_text(text)
    command = ["run", "-i", str(FIXTURES / "passages"), "-o", str(output), "--quiet"] + ["--overwrite"] * bool(old)
    done = subprocess.run([sys.executable, "-c", STOPPED_AFTER_THE_WRITE, *command], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).parents[1])
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "touche: terminated"
    assert {path.name: path.read_text() for path in output.iterdir()} == old if old else not output.exists()


def test_a_stopped_run_that_wrote_nothing_removes_nothing(tmp_path):
    """Removing whatever changed in the output took another process's finished run with it."""
    output = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", STOPPED_AFTER_THE_WRITE, "run", "-i", str(FIXTURES / "passages"),
                           "-o", str(output), "--quiet"], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parents[1], env={**os.environ, "BESIDE": "1"})
    assert done.returncode == 143, done.stderr
    assert (output / "run.txt").read_text() == "another run\n"
    assert (output / "ir-metadata.yml").read_text() == "another: run\n"


def test_a_run_stopped_with_its_stdout_closed_and_threads_alive_exits_as_stopped(tmp_path):
    """`touche run ... >&-` (Python's stdout is None) stopped while a worker thread is alive, as ChatNoir's page
    threads are: flushing stdout before the quick exit raised an AttributeError, a traceback and no quick exit."""
    child = ("import sys, threading, time\n"
             "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
             "sys.stdout = None\n" + STOPPED_AFTER_THE_WRITE)
    done = subprocess.run([sys.executable, "-c", child, "run", "-i", str(FIXTURES / "passages"), "-o",
                           str(tmp_path / "out"), "--quiet"], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parents[1])
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "touche: terminated"
    assert "Traceback" not in done.stderr


def test_a_run_whose_stderr_cannot_be_written_still_writes_its_run(tmp_path):
    """Its first progress bar's write raised (stderr closed, on a full disk, a pipe whose reader left) and the run
    ended at once with no message and no run; --quiet, writing no bar, ran."""
    output = tmp_path / "out"
    with open("/dev/full", "w") as full:
        done = subprocess.run([TOUCHE, "run", "-i", str(passages_input(tmp_path, [])), "-o", str(output)],
                              stdout=subprocess.PIPE, stderr=full, timeout=600)
    assert done.returncode == 0 and tira_accepts(output)


def test_results_that_cannot_be_printed_are_an_error(tmp_path):
    """validate, evaluate and classify print their results: to a full disk that is one line and exit 1, not a
    traceback."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([TOUCHE, "classify", "Is tea better than coffee?"], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip() == "touche: error: cannot write the output: no space left on device"


def test_classify_reads_utf8_arguments_under_a_c_locale():
    """Without UTF-8 mode a C locale hands Python an argument's UTF-8 bytes as surrogate escapes: the objects read
    "caf | th"."""
    done = touche("classify", "--json", "Is café better than thé for breakfast?",
                  env={"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
                       "PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["objects"] == ["café", "thé"]


def test_a_closed_stdout_is_no_concern_of_a_run(tmp_path):
    """With `>&-` Python's stdout is None: the final flush must not fail a run that wrote its run.txt."""
    output = tmp_path / "out"
    done = subprocess.run([TOUCHE, "run", "-o", str(output), "--quiet"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=600, preexec_fn=lambda: os.close(1))
    assert done.returncode == 0 and tira_accepts(output), done.stderr
