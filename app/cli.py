"""The `touche` command line: parse, resolve settings (flags, then TIRA's environment), call the pipeline."""

from __future__ import annotations

import json
import logging
import os
import re
import resource
import signal
import sys
import threading
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal, Optional

import typer
from typer.exceptions import Abort, TyperException

from .errors import ToucheError, counted, environment_failure
from .files import (PROBE_BYTES, check_temporary_directory, describe_os_error, free_space, mount_point, os_reason,
                    outputs_kept, prepare_output, remove_empty, unwritable_folder)
from .encoder import DEVICES, PRECISIONS, check_cuda, check_interpreter
from .html import PAGE_TEXTS
from .logs import log_to_stderr
from .settings import DATA_DIR, MAX_DEPTH, MODELS_DIR, STANCE_DEPTH, STANCE_MODELS, RunSettings

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Argument retrieval for the Touché shared tasks (TIRA software).")
log = logging.getLogger("touche")

# Where TIRA (and its older helpers) put the input and output directories, in order of precedence.
INPUT_VARIABLES = ("inputDataset", "TIRA_INPUT_DATASET", "TIRA_INPUT_DIRECTORY")
OUTPUT_VARIABLES = ("outputDir", "TIRA_OUTPUT_DIR", "TIRA_OUTPUT_DIRECTORY")


# `docker run -v input:/in -v out:/out IMAGE`: the mounts the image reads and writes when nothing else is set.
MOUNTED_INPUT, MOUNTED_OUTPUT = Path("/in"), Path("/out")
IMAGE_VARIABLE = "TOUCHE_IMAGE"
CACHE_VARIABLES = ("XDG_CACHE_HOME",)

# Choices: a value outside them is a usage error (exit 2), as an unknown option is.
Device = Literal[DEVICES]
Precision = Literal[PRECISIONS]
Backend = Literal["auto", "local", "chatnoir"]
PageText = Literal[PAGE_TEXTS]
StanceReader = Literal[STANCE_MODELS]
Task = Literal["comparative", "controversial"]
ClassifierMethod = Literal["model", "rules"]


def given_path(value: str | Path) -> Path:
    """A path from the command line; an empty one is a usage error. `-o "$outputDir"` with the variable unset
    passes '', which a Path would take for the current directory and the run would write there; TIRA's unquoted
    `-i $inputDataset -o $outputDir` with the first unset passes "-o" as the input."""
    if not str(value).strip():
        raise typer.BadParameter("an empty path (an unset variable in quotes?)")
    if re.fullmatch(r"--?[A-Za-z][\w-]*", str(value)) and not Path(value).exists():
        raise typer.BadParameter(f"{str(value)!r} is an option, not a path (an unset variable before it? a file "
                                 f"of that name: ./{value})")
    return Path(value)


def page_path(value: str | Path) -> Path:
    """`touche report -o`: a file, or a directory (existing, or written with a trailing "/"), which gets
    report.html; `-o reports/` wrote a file named "reports"."""
    path = given_path(value)
    return path / "report.html" if str(value).endswith(("/", os.sep)) or path.is_dir() else path


def first_set(variables: tuple[str, ...]) -> Optional[str]:
    """The first of the environment variables that is set and not blank (a blank one counts as unset)."""
    return next((name for name in variables if os.environ.get(name, "").strip()), None)


def resolve_dir(flag: Optional[Path], variables: tuple[str, ...], child: str = "") -> Optional[Path]:
    """The flag if given, else the first of the environment variables that is set and not blank (/ child)."""
    if flag is not None:
        return flag
    name = first_set(variables)
    return Path(os.environ[name]) / child if name is not None else None


def _ignore_relative(variables: tuple[str, ...]) -> None:
    """Unset each of the XDG `variables` that holds a relative path, with a warning: the XDG Base Directory
    specification calls such a value invalid, to be ignored (it put the cache wherever the run was started)."""
    for name in variables:
        value = os.environ.get(name, "")
        if value.strip() and not os.path.isabs(value):  # as read: " /tmp/x" is relative to where the run starts
            log.warning("ignoring $%s=%s: not an absolute path, which the XDG specification asks for", name, value)
            del os.environ[name]


def named_by(flag_value: Optional[Path], flag: str, variables: tuple[str, ...]) -> str:
    """The option to name in an error about a directory: the flag, and the variable it came from if not given."""
    name = first_set(variables) if flag_value is None else None
    return f"{flag} (it came from ${name})" if name is not None else flag


def mounted(directory: Path) -> bool:
    """Whether `directory` is a mount into the image (a plain directory there dies with the container)."""
    return directory.is_dir() and mount_point(directory)


def lost_with_the_container(directory: Path) -> bool:
    """Whether, in the image (`$TOUCHE_IMAGE`, set by its Dockerfile), `directory` lies on the container's own file
    system, under no mount: a relative `-o` or a mistyped mount point kept the run where `--rm` removes it."""
    if not os.environ.get(IMAGE_VARIABLE):
        return False
    path = Path(os.path.realpath(directory))
    return not any(mount_point(folder) for folder in (path, *path.parents) if folder != Path("/"))


def shown(path: Path) -> str:
    """A path as an error names it: quoted where it has spaces at an end or characters that do not print
    (`$inputDataset="/data/in "` read "/data/in does not exist" of a directory that does)."""
    text = str(path)
    return repr(text) if text != text.strip() or not text.isprintable() else text


def check_cache_dir(cache_dir: Path, output_dir: Path, flag: str = "--cache-dir") -> None:
    """Before any work: the cache can be a directory, and lies outside the output (TIRA keeps all of the output)."""
    try:  # a parent this user may not search ($XDG_CACHE_HOME in another user's home): stat fails
        there = cache_dir.exists()
        existing = next((path for path in cache_dir.parents if path.exists()), None)
    except OSError as error:
        raise ToucheError(f"cache directory {cache_dir} cannot be reached ({os_reason(error)}): pass a directory "
                          f"you may use to {flag}") from None
    if there and not cache_dir.is_dir():
        raise ToucheError(f"cache directory {cache_dir} is a file: pass a directory to {flag}")
    if existing is not None and not existing.is_dir():  # $XDG_CACHE_HOME a file: the cache went uncached
        raise ToucheError(f"cache directory {cache_dir} cannot be made: {existing} is a file; pass a directory to "
                          f"{flag}")
    cache, output = cache_dir.resolve(), output_dir.resolve()
    if cache == output or output in cache.parents:
        raise ToucheError(f"cache directory {cache_dir} lies in the output {output_dir}, which TIRA keeps whole: "
                          f"choose another {flag}")
    if (folder := unwritable_folder(cache_dir)) is not None:  # a warning: a filled read-only cache still serves
        reason = "a read-only file system" if _read_only(folder) else "permission denied"
        log.warning("cache directory %s cannot be written (%s): what this run computes is not kept for the next; "
                    "pass a writable directory to %s", cache_dir, reason, flag)
    elif (room := free_space(cache_dir)) is not None and room < PROBE_BYTES:  # a full disk: said at the first save
        log.warning("cache directory %s: no space left on device: what this run computes is not kept for the next; "
                    "pass a directory on a disk with room to %s", cache_dir, flag)


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def resolve_io(input_flag: Optional[Path], output_flag: Optional[Path], demo: Path) -> tuple[Path, Path]:
    """Input and output directories: flags, then TIRA's variables, then /in and /out mounted into the image, then
    the bundled demo input (into /out when mounted, else out/demo)."""
    input_dir = resolve_dir(input_flag, INPUT_VARIABLES)
    output_dir = resolve_dir(output_flag, OUTPUT_VARIABLES)
    if input_dir is None and MOUNTED_INPUT.is_dir():
        if output_dir is None and not mounted(MOUNTED_OUTPUT):  # written inside the container, lost with it
            raise ToucheError(f"the input is the mounted {MOUNTED_INPUT}, but nothing is mounted at {MOUNTED_OUTPUT} "
                              f"to keep the run: mount an output directory there (docker run -v DIR:"
                              f"{MOUNTED_OUTPUT}) or pass -o/--output")
        input_dir, output_dir = MOUNTED_INPUT, output_dir or MOUNTED_OUTPUT
    if input_dir is None:  # the demo, unless a TIRA job lost its input variable: TIRA must not get the demo's run
        empty = [name for name in INPUT_VARIABLES if name in os.environ]  # set, but blank: else it resolved
        if empty:
            raise ToucheError(f"${empty[0]} is set but empty: set it to the input directory, or pass -i/--input")
        variable = first_set(OUTPUT_VARIABLES)
        if output_flag is None and variable is not None:
            raise ToucheError(f"${variable} names the output but no input is given: set $inputDataset or pass "
                              "-i/--input (the demo runs without either, into -o or out/demo)")
        input_dir = demo
        output_dir = output_dir or (MOUNTED_OUTPUT if mounted(MOUNTED_OUTPUT) else Path("out/demo"))
        log.warning("no input given (no -i, no $inputDataset, nothing mounted at %s): running the bundled demo "
                    "input %s into %s", MOUNTED_INPUT, demo, output_dir)
    if output_dir is None:
        raise ToucheError("no output directory: pass -o/--output or set outputDir")
    return input_dir, output_dir


def checked_io(input_flag: Optional[Path], output_flag: Optional[Path], demo: Path) -> tuple[Path, Path, str]:
    """`resolve_io`'s directories, checked before any work: the input an existing directory, the output not the
    input, and not lost with the container (a warning); and the option an error about the output names."""
    input_dir, output_dir = resolve_io(input_flag, output_flag, demo)
    input_origin = named_by(input_flag, "-i/--input", INPUT_VARIABLES)
    if input_dir.exists() and not input_dir.is_dir():
        raise ToucheError(f"input {shown(input_dir)} is a file: pass the directory holding topics and corpus to "
                          f"{input_origin}")
    if not input_dir.is_dir():
        raise ToucheError(f"input directory {shown(input_dir)} does not exist: pass an existing one to "
                          f"{input_origin}")
    output_origin = named_by(output_flag, "-o/--output", OUTPUT_VARIABLES)
    if same_directory(output_dir, input_dir):  # run.txt among the data; as root, even a read-only one
        raise ToucheError(f"the output directory {output_dir} is the input directory: pass another to "
                          f"{output_origin}")
    if lost_with_the_container(output_dir):
        log.warning("the output directory %s lies in the container, where nothing is mounted: the run is lost "
                    "with it unless copied out (docker cp); mount a directory (docker run -v DIR:%s) and pass "
                    "it to %s", output_dir, MOUNTED_OUTPUT, output_origin)
    return input_dir, output_dir, output_origin


def resolve_cache(cache_flag: Optional[Path], output_dir: Path) -> Optional[Path]:
    """The cache directory: --cache-dir, else touche in $XDG_CACHE_HOME (a relative one ignored), else None (a
    temporary one for the run), checked before any work (`check_cache_dir`)."""
    if cache_flag is None:
        _ignore_relative(CACHE_VARIABLES)
    cache_dir = cache_flag or resolve_dir(None, CACHE_VARIABLES, "touche")
    if cache_dir is not None:
        check_cache_dir(cache_dir, output_dir, named_by(cache_flag, "--cache-dir", CACHE_VARIABLES))
    return cache_dir


def _setup_logging(debug: bool, quiet: bool, bars: bool = True) -> None:
    """Logs to stderr (warnings only when `quiet`); the libraries' progress bars off when `quiet` or not `bars`, for
    the rest of the process (through the environment, which their imports read, and their global switches)."""
    if quiet or not bars:
        # The libraries' own bars too: tqdm's and huggingface_hub's read these variables when imported, and
        # transformers' "Loading weights" bar follows huggingface_hub's switch (read when transformers is imported).
        os.environ.setdefault("TQDM_DISABLE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        _disable_imported_bars()
    log_to_stderr(logging.WARNING if quiet else logging.INFO, debug)


def _on_terminal() -> bool:
    """Whether stderr is a terminal, where the run's progress bars go (as tqdm's own `disable=None` decides): in a
    log file (TIRA's) a bar's redraws ran each warning into a line of "BM25 index: 0doc ...\r"."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed, or replaced by an object without it
        return False


def _disable_imported_bars() -> None:
    """Switch off the progress bars of libraries that were imported before --quiet was read (e.g. by a test
    runner or a caller of `app`), whose import-time settings missed the variables."""
    if "huggingface_hub" in sys.modules:  # its `utils` is a lazy attribute until the submodule is imported
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch system's stop, `docker stop`) or SIGHUP (the terminal or ssh session closed), raised where
    the run is so that its temporary caches and files are removed on the way out, as after Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__()
        self.signum = signum


def _raise_terminated(signum, frame) -> None:
    for stop in STOPS:  # one stop is enough: a second must not cut short the cleanup on the way out
        signal.signal(stop, signal.SIG_IGN)
    raise Terminated(signum)


# The stops a command ends on, in words; SIGINT is Python's KeyboardInterrupt, the others `Terminated`.
STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}
STOPS = (signal.SIGTERM, signal.SIGHUP)


def same_directory(output_dir: Path, input_dir: Path) -> bool:
    """Whether the output directory is the input directory: by path, and where it exists by the directory itself
    (a bind mount of the input, `docker run -v data:/in -v data:/out`, took the run into the data)."""
    if output_dir.resolve() == input_dir.resolve():
        return True
    try:
        return output_dir.is_dir() and os.path.samefile(output_dir, input_dir)
    except OSError:  # one that cannot be looked at: its own checks say so
        return False


def _say(line: str) -> None:
    """A command's last line on stderr, on a line of its own: a progress bar a stop cut short before its line
    ended is closed first ("BM25 index: 0doc [00:00, ?doc/s]touche: terminated")."""
    bars = []
    if "tqdm" in sys.modules:
        with suppress(RuntimeError):  # a bar made by another thread while they are listed
            bars = list(sys.modules["tqdm"].tqdm._instances)
    for bar in bars:
        with suppress(Exception):  # one stopped while it was being made, or whose stream is gone
            bar.close()
    typer.echo(line, err=True)


@contextmanager
def _errors(debug: bool):
    """Turn failures into one line on stderr and a non-zero exit; tracebacks only with --debug."""
    # A stop that is ignored stays ignored: `nohup touche run …` must outlive its terminal.
    previous = {stop: signal.signal(stop, _raise_terminated) for stop in STOPS
                if _main_thread() and signal.getsignal(stop) != signal.SIG_IGN}
    try:
        yield
    except OutputLost:  # results printed within (classify's, batch by batch): `main` says what was lost
        raise
    except ToucheError as error:
        if debug:
            raise
        _say(f"touche: error: {' '.join(str(error).split())}")  # one line, whatever it quotes
        raise typer.Exit(1) from None
    except KeyboardInterrupt as error:
        signum = error.signum if isinstance(error, Terminated) else signal.SIGINT
        _say(f"touche: {STOPPED[signum]}")
        raise typer.Exit(128 + signum) from None
    except OSError as error:  # the machine's problem (a full disk, a missing mount), not the program's
        if debug:
            raise
        _say(f"touche: error: {' '.join(describe_os_error(error).split())}")
        raise typer.Exit(1) from None
    except Exception as error:  # noqa: BLE001 - the last line of defence of a batch job
        if debug:
            raise
        known = environment_failure(error)
        if known is not None:
            _say(f"touche: error: {known}")
            raise typer.Exit(1) from None
        message = " ".join(str(error).split()) or "no message"
        _say(f"touche: internal error: {type(error).__name__}: {message} (run with --debug for the traceback)")
        raise typer.Exit(1) from None
    finally:
        for stop, handler in previous.items():
            signal.signal(stop, handler)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class OutputLost(Exception):
    """The results could not be written to stdout (a full disk under it, a reader that left)."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def say(text: str) -> None:
    """Print a result line to stdout; a failure is `OutputLost`, which `main` reports as such."""
    try:
        typer.echo(text)
    except OSError as error:
        raise OutputLost(error) from None


def warn_moot_stance_options(stance: bool, stance_model: str, stance_depth: int) -> None:
    """Say which stance options the others leave without effect: a run that reads as asked but not as meant (what
    the topics' task leaves without effect, the pipeline says once it knows the task)."""
    if not stance and stance_model != RunSettings.stance_model:
        log.warning("--stance-model %s picks how stance is read, which --no-stance leaves out: ignored", stance_model)
    if stance_depth != STANCE_DEPTH and (not stance or stance_model == "head"):
        log.warning("--stance-depth %d is how many documents the stance cross-encoder reads, which %s leaves out: "
                    "ignored", stance_depth, "--no-stance" if not stance else "--stance-model head")


@app.command()
def run(
    input_dir: Optional[Path] = typer.Option(None, "-i", "--input", parser=given_path,
                                             help="Input directory (TIRA's $inputDataset)."),
    output_dir: Optional[Path] = typer.Option(None, "-o", "--output", parser=given_path,
                                              help="Output directory (TIRA's $outputDir)."),
    tag: str = typer.Option(RunSettings.tag, help="Run tag (6th column)."),
    candidates: int = typer.Option(RunSettings.candidates, min=1, help="First-stage candidates per topic."),
    rerank_depth: int = typer.Option(RunSettings.rerank_depth, min=1, help="Candidates per topic scored by the "
                                     "dense, quality and stance models; the rest follow in first-stage order."),
    depth: int = typer.Option(RunSettings.depth, min=1, max=MAX_DEPTH, help="Documents per topic in the run."),
    device: Device = typer.Option(RunSettings.device, help="auto, cpu or cuda."),
    precision: Precision = typer.Option(RunSettings.precision, help="Encoder precision: auto (bf16 on CPUs with "
                                        "native bf16), fp32 or bf16."),
    corpus: Optional[Path] = typer.Option(None, parser=given_path, help="The corpus file to rank (a path, or a file "
                                          "name in the input directory) when the input holds more than one "
                                          "(README: which corpus a run ranks)."),
    topics: Optional[Path] = typer.Option(None, parser=given_path, help="The topics file (a path, or a file name in "
                                          "the input directory) when the input's has another name than topics.xml, "
                                          "queries.xml or queries.jsonl, as Touché's releases have."),
    backend: Backend = typer.Option(RunSettings.backend, help="auto (local corpus, else ChatNoir credentials), "
                                    "local or chatnoir."),
    index: Optional[str] = typer.Option(None, help="ChatNoir index, e.g. clueweb12 (default: the credentials "
                                        "file's, else clueweb22/b)."),
    page_text: PageText = typer.Option(RunSettings.page_text, help="How ChatNoir's pages are read: main "
                                       "(Resiliparse's main content, as ChatNoir extracts it) or full (all visible "
                                       "text)."),
    cache_dir: Optional[Path] = typer.Option(None, parser=given_path, help="Cache for the BM25 index, embeddings "
                                             "and fetched pages, kept across runs (default: touche in $XDG_CACHE_HOME, "
                                             "else a temporary directory removed after the run; never the output)."),
    stance: bool = typer.Option(True, "--stance/--no-stance", help="Stance labels in column 2 (else Q0)."),
    stance_model: StanceReader = typer.Option(RunSettings.stance_model, help="cross: on controversial topics a "
                                              "cross-encoder reading topic and document together picks PRO or CON "
                                              "for the top --stance-depth documents; head: embedding heads only "
                                              "(comparative topics always use them, measured better there)."),
    stance_depth: int = typer.Option(STANCE_DEPTH, min=0, show_default=False, help="Documents per topic read by "
                                     f"the stance cross-encoder (default {STANCE_DEPTH}); the default "
                                     "--rerank-depth is as deep."),
    task: Optional[Task] = typer.Option(None, help="comparative or controversial (default: from the topics)."),
    balance_stance: bool = typer.Option(False, "--balance-stance", help="Reorder the top 10 of argumentative "
                                        "topics to alternate pro and con, moving documents up from the top 20 (the "
                                        "score column keeps its order)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing run.txt and ir-metadata.yml (with "
                                   "--no-metadata an old ir-metadata.yml is removed: it would describe another run)."),
    metadata: bool = typer.Option(True, "--metadata/--no-metadata", help="Write ir-metadata.yml beside run.txt "
                                  "(tirex-tracker: hardware, resources, software, command; models, settings)."),
    quiet: bool = typer.Option(False, "--quiet", help="Warnings only, no progress bars."),
    debug: bool = typer.Option(False, "--debug", help="Debug logging and tracebacks."),
) -> None:
    """Retrieve and rank documents for every topic and write run.txt."""
    bars = _on_terminal()
    _setup_logging(debug, quiet, bars)  # before the imports: bars read their settings then
    with _errors(debug):  # the imports too: a memory limit, a stop or a library's bad setting fail them
        from .metadata import METADATA_FILE, recorded
        from .corpus import check_choice
        from .pipeline import DEMO_INPUT, run as run_pipeline
        from .runfile import RUN_FILES, check_tag
        from .topics import topics_file

        check_tag(tag)  # before the input: a bad tag is said without "running the bundled demo" first
        input_dir, output_dir, output_origin = checked_io(input_dir, output_dir, DEMO_INPUT)
        check_choice(backend, corpus)
        if topics is not None:
            topics = topics_file(input_dir, topics)
        if balance_stance and not stance:  # it would quietly reorder nothing
            raise ToucheError("--balance-stance alternates stance labels, which --no-stance leaves out: drop one")
        warn_moot_stance_options(stance, stance_model, stance_depth)
        if os.environ.get("inputRun", "").strip():  # a previous stage's run, which TIRA mounts for a pipeline step
            log.warning("ignoring $inputRun (%s): this software takes its candidates from the input (a re-rank file "
                        "there is read), its own BM25 or ChatNoir", os.environ["inputRun"].strip())
        check_interpreter()
        check_temporary_directory()  # before torch's import too
        if device == "cuda":
            check_cuda()
        cache_dir = resolve_cache(cache_dir, output_dir)
        # ir-metadata.yml with --no-metadata too: an old one would describe another run (recorded removes it).
        outputs = RUN_FILES + (METADATA_FILE,)
        made = prepare_output(output_dir, outputs, overwrite, output_origin)
        try:  # a run that fails leaves no directory it made behind, where it is empty
            settings = RunSettings(input_dir=input_dir, output_dir=output_dir, tag=tag, candidates=candidates,
                                   depth=depth, overwrite=overwrite, device=device, precision=precision,
                                   progress=not quiet and bars, backend=backend, index=index,
                                   page_text=page_text,
                                   cache_dir=cache_dir, rerank_depth=rerank_depth, stance=stance,
                                   stance_model=stance_model, stance_depth=stance_depth, task=task,
                                   balance_stance=balance_stance, corpus=corpus, topics=topics)
            # A stop, even after run.txt is in place (validation, the tracker's stop), leaves the old run as it was.
            with outputs_kept(output_dir, outputs), recorded(settings, enabled=metadata) as found:
                report = run_pipeline(settings)
                found["first stage"] = report.origin
        except BaseException:
            remove_empty(made)
            raise
        stages = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in report.stages.items())
        log.info("wrote %s: %d lines for %d topics from %d documents (%s)", report.run_path, report.rows,
                 report.topics, report.documents, stages)


# Every command but run (whose --debug also logs at DEBUG) takes --debug for the traceback an internal error points to.
DEBUG_OPTION = typer.Option(False, "--debug", help="Tracebacks instead of one-line errors.")


@app.command()
def validate(
    path: Path = typer.Argument(..., parser=given_path, help="A run file or an output directory holding run.txt."),
    task: Optional[Task] = typer.Option(None, help="comparative or controversial: check stance labels for it."),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Check a run as TIRA does (check_format) plus Touché's rules; exit 1 when invalid."""
    with _errors(debug):
        from .runfile import validate_run

        result = validate_run(path, task)
    for kind, problems in (("warning", result.warnings), ("error", result.errors)):
        for problem in problems:
            say(f"{kind}: {problem}")
        if problems.more:
            say(f"{kind}: ... and {problems.more} more")
    if not result.ok:
        kind = f" ({result.kind})" if result.kind else ""
        say(f"invalid: {counted(result.errors.count, 'problem')} in {result.path or path}{kind}")
        raise typer.Exit(1)
    say(f"valid: {result.path} ({counted(result.lines, 'line')}, {counted(result.topics, 'topic')})")


@app.command()
def evaluate(
    run_path: Path = typer.Argument(..., metavar="RUN", parser=given_path, help="A run file or an output directory."),
    qrels: Path = typer.Option(..., parser=given_path, help="Relevance qrels."),
    quality_qrels: Optional[Path] = typer.Option(None, parser=given_path, help="Quality qrels."),
    stance_qrels: Optional[Path] = typer.Option(None, parser=given_path,
                                                help="Stance qrels (label in the 4th column)."),
    per_topic: bool = typer.Option(False, help="Also print each topic's scores."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    debug: bool = DEBUG_OPTION,
) -> None:
    """nDCG@5/@10 (judged-only and standard) and stance macro-F1 of a run."""
    with _errors(debug):
        from .evaluate import evaluate_run, topic_order

        result = evaluate_run(run_path, qrels, quality_qrels, stance_qrels)
    if as_json:
        payload = {"mean": result.mean}
        if per_topic:
            payload["per_topic"] = result.per_topic
        say(json.dumps(payload, indent=2, sort_keys=True))
        return
    if per_topic:
        for qid in sorted(result.per_topic, key=topic_order):
            for name, value in result.per_topic[qid].items():  # in the means' order (nDCG@5 before @10)
                say(f"{qid}\t{name}\t{value:.4f}")
    for name, value in result.mean.items():  # a count as a count ("stance judged documents")
        say(f"all\t{name}\t{value:.0f}" if name.endswith("documents") else f"all\t{name}\t{value:.4f}")


@app.command()
def report(
    run_paths: list[Path] = typer.Argument(..., metavar="RUN...", parser=given_path,
                                           help="Run files or output directories; the first is the baseline."),
    qrels: Path = typer.Option(..., parser=given_path, help="Relevance qrels."),
    quality_qrels: Optional[Path] = typer.Option(None, parser=given_path, help="Quality qrels."),
    stance_qrels: Optional[Path] = typer.Option(None, parser=given_path,
                                                help="Stance qrels (label in the 4th column)."),
    output: Path = typer.Option(Path("report.html"), "-o", "--output", parser=page_path,
                                help="The HTML page to write (a directory: report.html in it)."),
    names: Optional[str] = typer.Option(None, help="Comma-separated run names (default: the file names)."),
    debug: bool = DEBUG_OPTION,
) -> None:
    """One HTML page comparing runs: per-topic nDCG, bootstrap intervals, paired tests, stance confusion."""
    with _errors(debug):
        from .report import build_report, check_output, render_html, write_report

        check_output(output, [*run_paths, qrels, quality_qrels, stance_qrels])
        result = build_report(run_paths, qrels, quality_qrels, stance_qrels,
                              names.split(",") if names is not None else None)
        write_report(render_html(result), output)
    typer.echo(f"wrote {output}: {', '.join(run.name for run in result.runs)} on {len(result.topics)} judged "
               "topics", err=True)


@app.command()
def classify(
    questions: Optional[list[str]] = typer.Argument(None, help="Questions to classify."),
    file: Optional[Path] = typer.Option(None, "--file", parser=given_path,
                                        help="One question per line (- for the standard input), a topics.xml or a "
                                             "queries.jsonl."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
    method: ClassifierMethod = typer.Option("model", help="model (learned) or rules (Ajjour et al.'s baseline)."),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Question type (argumentative / factual / method), comparative or not, and the compared objects."""
    if not questions and file is None:  # a usage error, said before the classifier loads
        raise typer.BadParameter("no questions: pass them as arguments or with --file", param_hint="QUESTIONS")
    with _errors(debug):
        from .questions import format_line, given_questions, load_classifier

        if method == "model":  # it embeds the questions; the encoder's loading bar would be said for each call
            check_interpreter()
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            _disable_imported_bars()
        classifier, asked = load_classifier(method), given_questions(questions or [], file)
        for result in classifier.analyses(asked):  # each batch said when done: a file of thousands takes minutes
            say(json.dumps(result.to_json(), ensure_ascii=False) if as_json else format_line(result))


train_app = typer.Typer(no_args_is_help=True, help="Retrain a shipped model from a data folder (fixed seeds; "
                        "docs/DATA.md).")
app.add_typer(train_app, name="train")

# Their defaults are said in words: as paths they were cut to an ellipsis at 80 columns where the checkout's path
# is long.
DATA_OPTION = typer.Option(DATA_DIR, "--data", parser=given_path, show_default=False,
                           help="The data folder (this checkout's ../shared/data by default): docs/DATA.md says "
                           "what goes in it.")
MODELS_OPTION = typer.Option(MODELS_DIR, "--out", parser=given_path, show_default=False,
                             help="Where the artefacts go (by default the package's app/models, where runs load "
                             "them).")

SEED_OPTION = typer.Option(13, "--seed", min=0, max=2**32 - 1,
                           help="The seed of every random choice (numpy's and scikit-learn's take 0 to 2^32 - 1).")


TRAINED_MODELS = {
    "questions": "The question-type, comparative and object-tagging heads.",
    "quality": "The argument-quality head.",
    "relevance": "The relevance head (query-passage features + MiniLM embedding).",
    "stance": "The comparative and controversial stance heads.",
    "stance-cross": "The controversial stance cross-encoder (CPU; 7 to 15 minutes on 2 cores).",
}


def _train_command(name: str, help_text: str):
    """`touche train NAME`: app.training.NAME.main on the data folder, output folder and seed."""

    def train(data: Path = DATA_OPTION, out: Path = MODELS_OPTION, seed: int = SEED_OPTION,
              debug: bool = DEBUG_OPTION) -> None:
        from importlib import import_module

        log_to_stderr(logging.INFO, debug)  # the training's progress, and what it measured
        with _errors(debug):
            from .training.common import require_data

            if name != "questions":  # the one that reads no encoder
                check_interpreter()
            module = import_module(f"app.training.{name.replace('-', '_')}")
            require_data(data, module.DATA_FILES, f"touche train {name}")
            made = prepare_output(out, module.OUTPUTS, overwrite=True, flag="--out")  # before the minutes of training
            try:  # a training that fails or is stopped leaves no folder it made behind, where it is empty
                module.main(data, out, seed)
            except BaseException:
                remove_empty(made)
                raise

    train.__doc__ = help_text
    return train


for _name, _help in TRAINED_MODELS.items():
    train_app.command(_name)(_train_command(_name, _help))


class LogStream:
    """stderr for logs and progress bars: a line that cannot be written (stderr closed, on a full disk, a pipe
    whose reader left) is dropped, and never ends the run; a progress bar's write raised and lost the run."""

    def __init__(self, stream):
        self.stream = stream if stream is not None else open(os.devnull, "w")  # `2>&-`: Python's stderr is None

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except (OSError, ValueError):  # ValueError: the stream was closed
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is left cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# Below this address space (ulimit -v) no command works, and between about 240 and 280 MB scipy's OpenBLAS, loading,
# retries its allocation for ever, deaf to SIGTERM (evaluate and run hung). Under about 170 MB this module's own
# imports (numpy, lxml) fail before the check, with the interpreter's traceback.
MIN_ADDRESS_SPACE = 512 * 10**6


def _address_space_limit() -> int | None:
    """The soft limit on this process's address space in bytes, None where there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def main(args: list[str] | None = None) -> None:
    """The `touche` command. A usage error (an unknown option, a value out of range) is one line on stderr with
    click's exit status 2, as every other error is one line (`_errors`); no arguments at all show the help."""
    try:
        os.getcwd()
    except FileNotFoundError:  # torch's MKL would abort at load with a message of its own
        typer.echo("touche: error: the working directory no longer exists: run touche from one that does", err=True)
        sys.exit(1)
    if (limit := _address_space_limit()) is not None and limit < MIN_ADDRESS_SPACE:
        typer.echo(f"touche: error: the address space is limited to {limit // 10**6} MB (ulimit -v); touche needs "
                   f"{MIN_ADDRESS_SPACE // 10**6} MB at least, a run some GB", err=True)
        sys.exit(1)
    if not isinstance(sys.stderr, LogStream):
        sys.stderr = LogStream(sys.stderr)
    try:
        status = app(args=args, prog_name="touche", standalone_mode=False)
        if sys.stdout is not None:  # `>&-`: Python's stdout is None
            try:
                sys.stdout.flush()  # here, not at exit: a full disk under stdout is an error like any other
            except OSError as error:
                raise OutputLost(error) from None
    except TyperException as error:  # click's errors (typer vendors click): usage errors above all
        code = getattr(error, "exit_code", 1)
        if type(error).__name__ == "NoArgsIsHelpError":  # its message is the help, unless rich has shown it
            if error.format_message().strip():
                error.show()
            sys.exit(code)
        message = " ".join((error.format_message() if hasattr(error, "format_message") else str(error)).split())
        context = getattr(error, "ctx", None)
        hint = f" (see '{context.command_path} --help')" if context is not None else ""
        typer.echo(f"touche: error: {message}{hint}", err=True)
        sys.exit(code)
    except Abort:  # end of input at a prompt, as click says "Aborted!"
        typer.echo("touche: aborted", err=True)
        sys.exit(1)
    except OutputLost as lost:  # the results (validate, evaluate, classify) did not get out
        _drop_stdout()
        if not isinstance(lost.error, BrokenPipeError):  # the reader has all it wanted (`| head`)
            typer.echo(f"touche: error: cannot write the output: {os_reason(lost.error)}", err=True)
        sys.exit(1)
    status = status if isinstance(status, int) else 0
    if status == 0 and args is None and _main_thread():  # the command is done: a stop in the interpreter's
        # teardown (a second after torch) is moot. Not for a caller from Python, which goes on (ignoring is inherited).
        for stop in STOPPED:
            signal.signal(stop, signal.SIG_IGN)
    if status in {128 + stop for stop in STOPPED} and threading.active_count() > 1:
        # Stopped, its cleanup done: worker threads still inside a request (ChatNoir pages) would hold the exit for
        # their time-outs and retries, past `docker stop`'s 10 s.
        for stream in (sys.stdout, sys.stderr):  # `>&-`: Python's stdout is None
            if stream is not None:
                with suppress(OSError, ValueError):
                    stream.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":  # `python -m app.cli`, as the training and bench modules run; it did nothing, with exit 0
    main()
