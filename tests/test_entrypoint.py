"""The real entrypoint, called the way TIRA calls it, on a fixture input directory."""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.runfile import validate_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_entrypoint_writes_a_valid_run_from_tira_variables(fixtures, tmp_path):
    # The console script sits beside the interpreter running the tests (the venv need not be on PATH).
    touche = shutil.which("touche", path=str(Path(sys.executable).parent)) or shutil.which("touche")
    assert touche, "the touche console script must be installed (make setup)"
    inputs, outputs = tmp_path / "input", tmp_path / "output"
    shutil.copytree(fixtures / "passages", inputs)
    os.chmod(inputs, 0o555)
    environment = {**os.environ, "inputDataset": str(inputs), "outputDir": str(outputs),
                   "PATH": f"{Path(touche).parent}:{os.environ['PATH']}"}
    entrypoint = shlex.quote(str(ROOT / "entrypoint.sh"))  # a checkout under "My Projects" too
    done = subprocess.run(["sh", "-c", f'{entrypoint} -i "$inputDataset" -o "$outputDir" --quiet'],
                          env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout stays clean
    assert validate_run(outputs).ok
    assert sorted(p.name for p in outputs.iterdir()) == ["ir-metadata.yml", "run.txt"]  # TIRA keeps all: no caches
    assert (outputs / "run.txt").stat().st_mode & 0o044 == 0o044  # readable by whoever evaluates it
    assert "run" in yaml.safe_load((outputs / "ir-metadata.yml").read_text())["implementation"]["executable"]["cmd"]


@pytest.mark.slow
def test_entrypoint_works_from_a_checkout_without_touche_on_path(fixtures, tmp_path):
    # `./entrypoint.sh -i IN -o OUT` after `make setup`: the checkout's .venv provides touche
    if not (ROOT / ".venv" / "bin" / "touche").exists():
        pytest.skip("no .venv in this checkout (make setup makes it)")
    done = subprocess.run([str(ROOT / "entrypoint.sh"), "-i", str(fixtures / "passages"), "-o", str(tmp_path),
                           "--no-metadata"], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert validate_run(tmp_path).ok
    # stderr is no terminal (TIRA's log is a file): the log without progress bars, the libraries' "Loading
    # weights" among them, whose redraws ran each warning into a line
    assert "Loading weights" not in done.stderr and "it/s]" not in done.stderr and "INFO" in done.stderr


def test_entrypoint_called_through_a_link_finds_its_checkouts_touche(tmp_path):
    """`ln -s CHECKOUT/entrypoint.sh /entrypoint.sh`, as tira.json calls it: "entrypoint: no touche command"."""
    if not (ROOT / ".venv" / "bin" / "touche").exists():
        pytest.skip("no .venv in this checkout (make setup makes it)")
    (tmp_path / "entrypoint.sh").symlink_to(ROOT / "entrypoint.sh")
    done = subprocess.run([str(tmp_path / "entrypoint.sh"), "touche", "--help"], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "run" in done.stdout, done.stderr


def test_a_shell_given_to_the_image_runs_as_the_shell(tmp_path):
    """`docker run IMAGE sh -c '/entrypoint.sh -i $inputDataset -o $outputDir'` reaches the entrypoint with the
    shell as its first argument: it runs the shell (which then calls the entrypoint), not `touche run sh -c`."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # touche, without a .venv
    done = subprocess.run([str(ROOT / "entrypoint.sh"), "sh", "-c", "echo from the shell; exit 7"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 7 and done.stdout == "from the shell\n"


def test_a_touche_command_or_python_given_to_the_image_runs_as_itself(tmp_path):
    """`docker run IMAGE validate /out` was `touche run validate /out`: "Got unexpected extra argument(s)"; `python -c`
    was "No such option: -c"."""
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 d{r} {r} {9 - r}.0 t\n" for q in (1, 2, 3) for r in (1, 2)))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run([str(ROOT / "entrypoint.sh"), "validate", str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "valid" in done.stdout + done.stderr, done.stderr
    for python in ("python", f"python{sys.version_info.major}.{sys.version_info.minor}"):
        done = subprocess.run([str(ROOT / "entrypoint.sh"), python, "-c", "print(6 * 7)"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == "42\n", python


@pytest.mark.slow
def test_the_manifest_command_run_by_sh_hands_a_stop_to_touche(tmp_path):
    """TIRA runs the command with `sh -c` as the container's process 1: Debian's dash keeps running beside its last
    command and, as process 1, ignores SIGTERM; without `exec` a stopped container got no `touche: terminated` (no
    cleanup, no old run put back), only SIGKILL 10 s later."""
    import json
    import signal

    if any(character.isspace() for character in f"{ROOT}{tmp_path}"):
        pytest.skip("TIRA's command expands $inputDataset unquoted: TIRA's paths hold no spaces, this checkout's do")
    manifest = json.loads((ROOT / "tira.json").read_text(encoding="utf-8"))
    touche = shutil.which("touche", path=str(Path(sys.executable).parent)) or shutil.which("touche")
    environment = {**os.environ, "inputDataset": str(ROOT / "app" / "demo"), "outputDir": str(tmp_path / "out"),
                   "PATH": f"{Path(touche).parent}:{os.environ['PATH']}"}
    command = manifest["command"].replace("/entrypoint.sh", str(ROOT / "entrypoint.sh"), 1)
    shell = subprocess.Popen(["sh", "-c", command], env=environment, stderr=subprocess.PIPE, text=True)
    try:
        shell.stderr.readline()  # touche is logging: the shell, where it stays, has no more to do
        shell.send_signal(signal.SIGTERM)
        assert shell.wait(timeout=120) == 128 + signal.SIGTERM
        assert shell.stderr.read().splitlines()[-1] == "touche: terminated"
    finally:
        shell.kill()
    assert not (tmp_path / "out" / "run.txt").exists()


def test_the_manifest_names_the_readme_command_and_every_args_me_file():
    import json

    from app.corpus import ARGSME_FILES

    manifest = json.loads((ROOT / "tira.json").read_text(encoding="utf-8"))
    assert f"`{manifest['command']}`" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(task.get("command", manifest["command"]).startswith(manifest["command"]) for task in manifest["tasks"])
    assert manifest["command"].startswith("exec ")  # see test_the_manifest_command_run_by_sh_hands_a_stop_to_touche
    layouts = " ".join(manifest["input_layouts"])
    assert [name for name in ARGSME_FILES if name not in layouts] == []
