from pathlib import Path

import pytest

from app.errors import ToucheError
from app.files import make_directory, prepare_output


def test_a_file_or_a_dangling_link_in_the_way_is_named(tmp_path):
    (tmp_path / "afile").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ToucheError, match=r"afile is a file, not a directory"):
        make_directory(tmp_path / "afile" / "out")
    with pytest.raises(ToucheError, match=r"link is a link to .*nowhere, which leads nowhere"):
        prepare_output(tmp_path / "link", ["run.txt"], overwrite=False)
    assert make_directory(tmp_path / "new" / "out") == [tmp_path / "new" / "out", tmp_path / "new"]  # deepest first
    assert make_directory(tmp_path / "new" / "out") == []
    assert (tmp_path / "new" / "out").is_dir() and not (tmp_path / "nowhere").exists()


def test_directories_made_before_a_failing_level_are_removed_again(tmp_path):
    """"made/../afile/x" made "made", then failed at afile, and left "made" behind."""
    (tmp_path / "afile").write_text("")
    with pytest.raises(ToucheError, match=r"afile is a file, not a directory"):
        make_directory(tmp_path / "made" / ".." / "afile" / "x")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["afile"]
    assert make_directory(tmp_path / "new" / ".." / "new2") == [tmp_path / "new" / ".." / "new2", tmp_path / "new"]


def _chattr(flag: str, path) -> bool:
    """Whether `chattr FLAG PATH` worked (it needs root and a file system that keeps the flags)."""
    import shutil
    import subprocess

    return bool(shutil.which("chattr")) and subprocess.run(["chattr", flag, str(path)],
                                                          capture_output=True).returncode == 0


def test_an_immutable_run_or_an_append_only_directory_is_an_error_before_the_work(tmp_path):
    """A rename cannot replace an immutable run.txt nor put a file in place in an append-only directory: the run
    failed after its work (--overwrite), or left its probe file behind."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.txt").write_text("old\n")
    if not _chattr("+i", tmp_path / "out" / "run.txt"):
        pytest.skip("chattr cannot set flags here")
    try:
        with pytest.raises(ToucheError, match=r"run.txt is immutable \(chattr \+i\): --overwrite cannot replace it"):
            prepare_output(tmp_path / "out", ["run.txt"], overwrite=True)
    finally:
        _chattr("-i", tmp_path / "out" / "run.txt")
    prepare_output(tmp_path / "out", ["run.txt"], overwrite=True)

    (tmp_path / "append").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "append")
    assert _chattr("+a", tmp_path / "append")
    try:
        for directory in (tmp_path / "append", tmp_path / "link"):
            with pytest.raises(ToucheError, match=r"it is append-only \(chattr \+a\), so a run cannot be put"):
                prepare_output(directory, ["run.txt"], overwrite=False)
        assert list((tmp_path / "append").iterdir()) == []  # no probe file left behind
    finally:
        _chattr("-a", tmp_path / "append")


@pytest.mark.parametrize("ending", [KeyboardInterrupt, OSError])
def test_an_output_replaced_or_removed_is_kept_until_the_run_ends(tmp_path, ending):
    """A run stopped, or failing, once run.txt was in place removed it and the old run with it; one that finishes,
    and a write outside a run, leave nothing kept behind."""
    from app.files import atomic_file, discard_output, outputs_kept

    def write_both():
        with atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
            out.write("new run")
        discard_output(tmp_path / "ir-metadata.yml")

    def files():
        return {path.name: path.read_text() for path in tmp_path.iterdir()}

    old = {"run.txt": "old run", "ir-metadata.yml": "old: run"}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ending), outputs_kept(tmp_path, old):
        write_both()
        kept = sorted(name for name in files() if name.startswith(".touche-previous."))
        assert sorted(name.split(".", 3)[-1] for name in kept) == ["ir-metadata.yml.tmp", "run.txt.tmp"]
        assert sorted(files()) == sorted(kept + ["run.txt"])
        raise ending()
    assert files() == old
    with outputs_kept(tmp_path, old):
        write_both()
    assert files() == {"run.txt": "new run"}
    (tmp_path / "ir-metadata.yml").write_text("old: run")
    write_both()
    assert files() == {"run.txt": "new run"}


def test_a_stopped_run_leaves_what_another_run_put_in_place_meanwhile(tmp_path):
    """Two runs into one output: the stopped one put its kept run.txt over the other's finished one."""
    import fcntl

    from app.files import atomic_file, outputs_kept

    (tmp_path / "run.txt").write_text("old run")
    (tmp_path / ".touche-previous.1.run.txt.tmp").write_text("another run's kept file")
    held = open(tmp_path / ".touche-previous.1.run.txt.tmp")  # locked while that run goes on
    fcntl.flock(held, fcntl.LOCK_EX)
    with held, pytest.raises(KeyboardInterrupt), outputs_kept(tmp_path, ["run.txt", "ir-metadata.yml"]):
        with atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
            out.write("stopped run")
        with atomic_file(tmp_path / "ir-metadata.yml", ".ir-metadata.", output=True) as out:
            out.write("stopped: run")
        (tmp_path / "run.txt").write_text("another run")  # another process's, in place of ours
        raise KeyboardInterrupt
    assert {path.name: path.read_text() for path in tmp_path.iterdir()} == {
        "run.txt": "another run", ".touche-previous.1.run.txt.tmp": "another run's kept file"}


def test_what_a_killed_run_kept_goes_with_the_next_runs_start_what_a_running_one_keeps_stays(tmp_path):
    """SIGKILL just after run.txt was placed left hidden copies of the old run.txt and ir-metadata.yml (TIRA uploads
    them with the run) for an hour, whatever the runs in between."""
    import fcntl
    import subprocess
    import sys

    from app.files import atomic_file, discard_output, outputs_kept

    (tmp_path / "run.txt").write_text("old run")
    (tmp_path / "ir-metadata.yml").write_text("old: run")
    killed = ("import os, pathlib, sys; from app.files import atomic_file, discard_output, outputs_kept\n"
              "out = pathlib.Path(sys.argv[1])\n"
              "with outputs_kept(out, ['run.txt', 'ir-metadata.yml']):\n"
              "    with atomic_file(out / 'run.txt', '.run.', output=True) as f: f.write('killed run')\n"
              "    discard_output(out / 'ir-metadata.yml')\n"
              "    os.kill(os.getpid(), 9)\n")
    assert subprocess.run([sys.executable, "-c", killed, str(tmp_path)]).returncode == -9
    assert len(list(tmp_path.glob(".touche-previous.*"))) == 2
    (tmp_path / ".touche-previous.2.run.txt.tmp").write_text("a running run's kept file")
    with open(tmp_path / ".touche-previous.2.run.txt.tmp") as running:
        fcntl.flock(running, fcntl.LOCK_EX)
        with outputs_kept(tmp_path, ["run.txt", "ir-metadata.yml"]):
            with atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
                out.write("new run")
            discard_output(tmp_path / "ir-metadata.yml")
    assert sorted(path.name for path in tmp_path.iterdir()) == [".touche-previous.2.run.txt.tmp", "run.txt"]


def test_an_output_of_another_user_in_a_sticky_directory_cannot_be_overwritten_said_before_the_work(
        tmp_path, monkeypatch):
    """As /tmp is (mode 1777): the rename onto another user's run.txt failed after the work, "operation not
    permitted"."""
    import os

    sticky = tmp_path / "shared"
    sticky.mkdir()
    (sticky / "run.txt").write_text("another user's run")
    os.chmod(sticky, 0o1777)
    prepare_output(sticky, ["run.txt"], overwrite=True)  # this user's own
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(sticky).st_uid + 4242)
    with pytest.raises(ToucheError, match=r"run.txt belongs to another user \(.+\) in a sticky directory \(as /tmp "
                                          r"is\), where only a file's owner may replace it"):
        prepare_output(sticky, ["run.txt"], overwrite=True)
    os.chmod(sticky, 0o777)
    prepare_output(sticky, ["run.txt"], overwrite=True)  # not sticky: any writer may replace it


def test_a_kept_copy_is_born_locked_so_another_runs_start_never_takes_it(tmp_path, monkeypatch):
    """Locked after its linking, a copy another run's start swept up in between was lost, and with it the old run
    a stop puts back."""
    import os

    import app.files as files

    link = os.link

    def link_then_another_run_starts(source, target, **options):
        link(source, target, **options)
        files.remove_abandoned_temporaries(tmp_path, ".touche-previous.", by_change=True)

    monkeypatch.setattr(files.os, "link", link_then_another_run_starts)
    (tmp_path / "run.txt").write_text("old run")
    with pytest.raises(KeyboardInterrupt), files.outputs_kept(tmp_path, ["run.txt"]):
        with files.atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
            out.write("stopped run")
        raise KeyboardInterrupt
    assert {path.name: path.read_text() for path in tmp_path.iterdir()} == {"run.txt": "old run"}
    assert files._HOLDING == {}


def test_a_copy_a_stop_cannot_put_back_stays_unlocked_for_the_next_run(tmp_path, monkeypatch, caplog):
    """Its lock was held for the life of the process: the next run in it (the tests run many) could not remove it."""
    import errno
    import os

    import app.files as files

    link = os.link

    def full_for_run_txt(source, target, **options):
        if str(target).endswith("/run.txt"):
            raise OSError(errno.ENOSPC, "No space left on device")
        link(source, target, **options)

    (tmp_path / "run.txt").write_text("old run")
    with pytest.raises(KeyboardInterrupt), files.outputs_kept(tmp_path, ["run.txt"]):
        with files.atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
            out.write("stopped run")
        monkeypatch.setattr(files.os, "link", full_for_run_txt)
        raise KeyboardInterrupt
    assert "a stopped run cannot put back" in caplog.text and files._HOLDING == {}
    assert [path.name.split(".")[-3:] for path in tmp_path.iterdir()] == [["run", "txt", "tmp"]]
    with files.outputs_kept(tmp_path, ["run.txt"]):
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_this_user_may_not_remove_is_passed_over(tmp_path, monkeypatch):
    """Another user's killed run's, in a sticky directory (as /tmp): the sweep raised, and ir-metadata.yml was not
    written."""
    from pathlib import Path

    from app.files import remove_abandoned_temporaries

    for name in (".ir-metadata.theirs.tmp", ".ir-metadata.ours.tmp"):
        (tmp_path / name).write_text("half: written")
    unlink = Path.unlink

    def sticky(path, missing_ok=False):
        if "theirs" in path.name:
            raise PermissionError(1, "Operation not permitted")
        unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", sticky)
    remove_abandoned_temporaries(tmp_path, ".ir-metadata.")
    assert [path.name for path in tmp_path.iterdir()] == [".ir-metadata.theirs.tmp"]


def test_directories_made_for_outputs_are_readable_whatever_the_umask(tmp_path):
    """With umask 077 the run's 0644 files sat in a directory only its owner could enter."""
    import os

    old = os.umask(0o077)
    try:
        made = make_directory(tmp_path / "a" / "b")
    finally:
        os.umask(old)
    assert made == [tmp_path / "a" / "b", tmp_path / "a"]
    assert all(path.stat().st_mode & 0o777 == 0o755 for path in made)


def test_a_link_named_as_an_output_needs_overwrite(tmp_path):
    """A link leading nowhere under run.txt's name was replaced without --overwrite."""
    (tmp_path / "run.txt").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ToucheError, match=r"run.txt exists \(a link to .*nowhere, which leads nowhere\); pass "
                                          "--overwrite"):
        prepare_output(tmp_path, ["run.txt"], overwrite=False)
    prepare_output(tmp_path, ["run.txt"], overwrite=True)


def test_an_old_output_that_is_a_link_comes_back_as_the_link(tmp_path):
    """A link under ir-metadata.yml's name was not kept, and then the old run.txt that was went too."""
    from app.files import atomic_file, discard_output, outputs_kept

    (tmp_path / "run.txt").write_text("old run")
    (tmp_path / "meta.yml").write_text("old: run")
    (tmp_path / "ir-metadata.yml").symlink_to("meta.yml")
    with pytest.raises(KeyboardInterrupt), outputs_kept(tmp_path, ["run.txt", "ir-metadata.yml"]):
        with atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
            out.write("new run")
        discard_output(tmp_path / "ir-metadata.yml")
        raise KeyboardInterrupt
    assert (tmp_path / "run.txt").read_text() == "old run" and (tmp_path / "ir-metadata.yml").is_symlink()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ir-metadata.yml", "meta.yml", "run.txt"]


def test_a_run_whose_output_cannot_be_renamed_into_place_leaves_no_copy_behind(tmp_path, monkeypatch):
    """The old run.txt was kept just before the rename; the rename failed, and the copy stayed in the output."""
    from app.files import atomic_file, outputs_kept

    (tmp_path / "run.txt").write_text("old run")
    monkeypatch.setattr("app.files.os.replace", lambda *_: (_ for _ in ()).throw(PermissionError(1, "denied")))
    with pytest.raises(PermissionError), outputs_kept(tmp_path, ["run.txt"]):
        with atomic_file(tmp_path / "run.txt", ".run.", output=True) as out:
            out.write("new run")
    assert {path.name: path.read_text() for path in tmp_path.iterdir()} == {"run.txt": "old run"}


def test_a_killed_runs_scratch_is_removed_by_the_next_run_and_only_it(tmp_path, monkeypatch):
    """A run killed outright (SIGKILL, the OOM killer) left its temporary cache, its index of gigabytes, for good.
    A run's lock, not its process id, says it lives: ids mean nothing across PID namespaces."""
    import os
    import subprocess
    import sys
    import tempfile

    from app.files import OWNER_FILE, run_scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with run_scratch("touche-cache-") as killed:
        pass
    killed.mkdir()
    (killed / OWNER_FILE).write_text("12345\n")  # as a killed run leaves it: no process holds its lock
    (killed / "index").mkdir()
    unowned, fifo = tmp_path / "touche-cache-unowned", tmp_path / "touche-cache-fifo"
    unowned.mkdir()
    fifo.mkdir()
    os.mkfifo(fifo / OWNER_FILE)  # read, it held every run for ever
    (tmp_path / "touche-cache-link").symlink_to(killed)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, tempfile; from app.files import run_scratch\n"
                               f"tempfile.tempdir = {str(tmp_path)!r}\n"
                               "with run_scratch('touche-cache-') as d: print(d, flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        living = Path(holder.stdout.readline().strip())  # another run, alive, whatever its process id means here
        with run_scratch("touche-cache-") as scratch:
            assert (scratch / OWNER_FILE).is_file()
            left = {path.name for path in tmp_path.iterdir()} - {scratch.name}
    finally:
        holder.communicate("")
    assert left == {living.name, unowned.name, fifo.name, "touche-cache-link"}
    assert not scratch.exists() and not living.exists()


def test_an_output_directory_that_takes_no_file_is_removed_again(tmp_path, monkeypatch):
    """A full disk found by the probe file: the directories the run made for its output are not left behind."""
    import errno
    import tempfile

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "mkstemp", full)
    with pytest.raises(ToucheError, match="cannot write to output directory .*: no space left on device"):
        prepare_output(tmp_path / "new" / "deeper", ["run.txt"], overwrite=False)
    assert list(tmp_path.iterdir()) == []


def test_temporaries_no_lock_can_judge_go_by_their_age(tmp_path):
    """A link under a run's temporary name cannot be opened to ask its lock: another run's fresh one stays, one
    no write has touched for over an hour (the README's bound) goes; 30 minutes is fresh still."""
    import os
    import time

    from app.files import remove_abandoned_temporaries

    fresh, recent, old = (tmp_path / f".run.{name}.tmp" for name in ("fresh", "recent", "old"))
    for link, age in ((fresh, 0), (recent, 1800), (old, 3660)):
        link.symlink_to(tmp_path / "nowhere")
        os.utime(link, (time.time() - age, time.time() - age), follow_symlinks=False)
    remove_abandoned_temporaries(tmp_path, ".run.")
    assert sorted(path.name for path in tmp_path.iterdir()) == [fresh.name, recent.name]


def test_a_directory_under_a_temporary_name_is_no_temporary(tmp_path):
    """Taken for one, it failed `touche run` after all its work: "cannot write run.txt to OUT: is a directory"."""
    import os
    import time

    from app.files import remove_abandoned_temporaries

    kept, old = tmp_path / ".run.kept.tmp", tmp_path / ".run.old.tmp"
    kept.mkdir()
    old.mkdir()
    os.utime(old, (time.time() - 3660, time.time() - 3660))
    remove_abandoned_temporaries(tmp_path, ".run.")
    assert kept.is_dir() and old.is_dir()


@pytest.mark.parametrize("written", ["none", "part"])
def test_an_output_on_a_full_disk_is_said_before_the_work(tmp_path, monkeypatch, written):
    """An empty probe file is made on a full disk too (an inode, no block): the run failed at its write, after all
    its work (an attack with a full tmpfs and ext4). The probe writes PROBE_BYTES, and leaves nothing behind."""
    import errno
    import os

    from app import files

    real_write = os.write

    calls = []

    def full(handle, data):  # a short write takes what was left; the next says why
        calls.append(len(data))
        if written == "none" or len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(handle, data[:100])

    monkeypatch.setattr(files.os, "write", full)
    with pytest.raises(ToucheError, match=r"cannot write to output directory .*/out: no space left on device$"):
        prepare_output(tmp_path / "out", ["run.txt"], overwrite=False)
    assert not (tmp_path / "out").exists()  # the directory it made is gone again


def test_a_write_numpy_cut_short_is_said_in_words():
    """numpy's tofile raises an OSError of no errno: "cannot cache the BM25 index in ... (4327 requested and 2016
    written)"."""
    from app.files import os_reason

    assert os_reason(OSError("4327 requested and 2016 written")) \
        == "the file system took part of a write (4327 requested and 2016 written): a full disk, or a file size limit"


def test_a_probe_left_by_a_killed_run_is_removed_by_the_next_check(tmp_path):
    """A run killed (SIGKILL) within the output's probe left `.touche-probe.*` beside run.txt, which TIRA uploads;
    a probe another run is writing now (a fresh one) stays."""
    import os

    (tmp_path / "out").mkdir()
    old, fresh = tmp_path / "out" / ".touche-probe.old", tmp_path / "out" / ".touche-probe.new"
    old.write_bytes(b"x" * 100)
    fresh.write_bytes(b"x")
    os.utime(old, (1, 1))
    prepare_output(tmp_path / "out", ["run.txt"], overwrite=False)
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [".touche-probe.new"]
