"""The `touche` command line: parse, resolve settings (flags, then TIRA's environment), call the pipeline."""

from __future__ import annotations

import json
import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer

from .errors import ToucheError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Argument retrieval for the Touché shared tasks (TIRA software).")
log = logging.getLogger("touche")

# Where TIRA (and its older helpers) put the input and output directories, in order of precedence.
INPUT_VARIABLES = ("inputDataset", "TIRA_INPUT_DATASET", "TIRA_INPUT_DIRECTORY")
OUTPUT_VARIABLES = ("outputDir", "TIRA_OUTPUT_DIR", "TIRA_OUTPUT_DIRECTORY")


def resolve_dir(flag: Optional[Path], variables: tuple[str, ...]) -> Optional[Path]:
    """The flag if given, else the first of the environment variables that is set and non-empty."""
    if flag is not None:
        return flag
    for name in variables:
        if os.environ.get(name):
            return Path(os.environ[name])
    return None


def _setup_logging(debug: bool, quiet: bool) -> None:
    level = logging.DEBUG if debug else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S", force=True)
    for noisy in ("sentence_transformers", "transformers", "httpx", "urllib3", "bm25s"):
        logging.getLogger(noisy).setLevel(logging.WARNING if not debug else logging.DEBUG)


@contextmanager
def _errors(debug: bool):
    """Turn failures into one line on stderr and a non-zero exit; tracebacks only with --debug."""
    try:
        yield
    except ToucheError as error:
        if debug:
            raise
        typer.echo(f"touche: error: {error}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        typer.echo("touche: interrupted", err=True)
        raise typer.Exit(130) from None
    except Exception as error:  # noqa: BLE001 - the last line of defence of a batch job
        if debug:
            raise
        message = " ".join(str(error).split()) or "no message"
        typer.echo(f"touche: internal error: {type(error).__name__}: {message} (run with --debug for the "
                   "traceback)", err=True)
        raise typer.Exit(1) from None


@app.command()
def run(
    input_dir: Optional[Path] = typer.Option(None, "-i", "--input", help="Input directory (TIRA's $inputDataset)."),
    output_dir: Optional[Path] = typer.Option(None, "-o", "--output", help="Output directory (TIRA's $outputDir)."),
    tag: str = typer.Option("touche", help="Run tag (6th column)."),
    candidates: int = typer.Option(1000, min=1, help="First-stage candidates per topic."),
    rerank_depth: int = typer.Option(100, min=1, help="Candidates per topic scored by the dense, quality and "
                                     "stance models; the rest follow in BM25 order."),
    depth: int = typer.Option(1000, min=1, max=1000, help="Documents per topic in the run."),
    device: str = typer.Option("auto", help="auto, cpu or cuda."),
    precision: str = typer.Option("auto", help="Encoder precision: auto (bf16 on CPUs with native bf16), fp32 "
                                  "or bf16."),
    backend: str = typer.Option("auto", help="auto (local corpus, else ChatNoir credentials), local or chatnoir."),
    index: Optional[str] = typer.Option(None, help="ChatNoir index (default: the credentials file's, else clueweb22/b)."),
    cache_dir: Optional[Path] = typer.Option(None, help="Cache for fetched documents (default: under the output)."),
    stance: bool = typer.Option(True, "--stance/--no-stance", help="Stance labels in column 2 (else Q0)."),
    task: Optional[str] = typer.Option(None, help="comparative or controversial (default: from the topics)."),
    balance_stance: bool = typer.Option(False, help="Alternate pro and con near the top of argumentative topics."),
    overwrite: bool = typer.Option(False, help="Replace an existing run.txt."),
    quiet: bool = typer.Option(False, help="Warnings only, no progress bars."),
    debug: bool = typer.Option(False, help="Debug logging and tracebacks."),
) -> None:
    """Retrieve and rank documents for every topic and write run.txt."""
    from .encoder import PRECISIONS
    from .pipeline import DEMO_INPUT, RunSettings, run as run_pipeline

    _setup_logging(debug, quiet)
    with _errors(debug):
        input_dir = resolve_dir(input_dir, INPUT_VARIABLES)
        output_dir = resolve_dir(output_dir, OUTPUT_VARIABLES)
        if input_dir is None:
            input_dir = DEMO_INPUT
            output_dir = output_dir or Path("out/demo")
            log.info("no input given: running on the bundled demo input (%s)", DEMO_INPUT)
        if output_dir is None:
            raise ToucheError("no output directory: pass -o/--output or set outputDir")
        if not input_dir.is_dir():
            raise ToucheError(f"input directory {input_dir} does not exist")
        if device not in ("auto", "cpu", "cuda"):
            raise ToucheError(f"--device must be auto, cpu or cuda, not {device!r}")
        if precision not in PRECISIONS:
            raise ToucheError(f"--precision must be {', '.join(PRECISIONS)}, not {precision!r}")
        if task is not None and task not in ("comparative", "controversial"):
            raise ToucheError(f"--task must be comparative or controversial, not {task!r}")
        if backend not in ("auto", "local", "chatnoir"):
            raise ToucheError(f"--backend must be auto, local or chatnoir, not {backend!r}")
        settings = RunSettings(input_dir=input_dir, output_dir=output_dir, tag=tag, candidates=candidates,
                               depth=depth, overwrite=overwrite, device=device, precision=precision,
                               progress=not quiet, backend=backend, index=index, cache_dir=cache_dir,
                               rerank_depth=rerank_depth, stance=stance, task=task, balance_stance=balance_stance)
        report = run_pipeline(settings)
        stages = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in report.stages.items())
        typer.echo(f"wrote {report.run_path}: {report.rows} lines for {report.topics} topics "
                   f"from {report.documents} documents ({stages})", err=True)


@app.command()
def validate(
    path: Path = typer.Argument(..., help="A run file or an output directory holding run.txt."),
    task: Optional[str] = typer.Option(None, help="comparative or controversial: check stance labels for it."),
) -> None:
    """Check a run as TIRA does (check_format) plus Touché's rules; exit 1 when invalid."""
    from .runfile import STANCE_LABELS, validate_run

    with _errors(False):
        if task is not None and task not in STANCE_LABELS:
            raise ToucheError(f"--task must be one of {', '.join(STANCE_LABELS)}")
        result = validate_run(path, task)
    for warning in result.warnings:
        typer.echo(f"warning: {warning}")
    for error in result.errors:
        typer.echo(f"error: {error}")
    if not result.ok:
        typer.echo(f"invalid: {len(result.errors)} problems in {result.path or path}")
        raise typer.Exit(1)
    typer.echo(f"valid: {result.path} ({result.lines} lines, {result.topics} topics)")


@app.command()
def evaluate(
    run_path: Path = typer.Argument(..., metavar="RUN", help="A run file or an output directory."),
    qrels: Path = typer.Option(..., help="Relevance qrels."),
    quality_qrels: Optional[Path] = typer.Option(None, help="Quality qrels."),
    stance_qrels: Optional[Path] = typer.Option(None, help="Stance qrels (label in the 4th column)."),
    per_topic: bool = typer.Option(False, help="Also print each topic's scores."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """nDCG@5/@10 (judged-only and standard) and stance macro-F1 of a run."""
    from .evaluate import evaluate_run

    with _errors(False):
        result = evaluate_run(run_path, qrels, quality_qrels, stance_qrels)
    if as_json:
        payload = {"mean": result.mean}
        if per_topic:
            payload["per_topic"] = result.per_topic
        typer.echo(json.dumps(payload, indent=2, sort_keys=True))
        return
    if per_topic:
        for qid in sorted(result.per_topic, key=lambda q: (len(q), q)):
            for name, value in sorted(result.per_topic[qid].items()):
                typer.echo(f"{qid}\t{name}\t{value:.4f}")
    for name, value in result.mean.items():
        typer.echo(f"all\t{name}\t{value:.4f}")


@app.command()
def classify(
    questions: Optional[list[str]] = typer.Argument(None, help="Questions to classify."),
    file: Optional[Path] = typer.Option(None, "--file", help="One question per line, or a topics.xml."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
    method: str = typer.Option("model", help="model (learned) or rules (Ajjour et al.'s baseline)."),
) -> None:
    """Question type (argumentative / factual / method), comparative or not, and the compared objects."""
    from .questions import format_line, load_classifier, read_questions

    with _errors(False):
        texts = list(questions or []) + (read_questions(file) if file else [])
        if not texts:
            raise ToucheError("no questions: pass them as arguments or with --file")
        results = load_classifier(method).analyze_many(texts)
    for result in results:
        typer.echo(json.dumps(result.to_json(), ensure_ascii=False) if as_json else format_line(result))


train_app = typer.Typer(no_args_is_help=True, help="Retrain a shipped model from ../shared/data (fixed seeds).")
app.add_typer(train_app, name="train")

DATA_OPTION = typer.Option(Path(__file__).resolve().parents[2] / "shared" / "data", "--data",
                           help="The shared data folder.")
MODELS_OPTION = typer.Option(Path(__file__).resolve().parent / "models", "--out", help="Where the artefacts go.")


TRAINED_MODELS = {
    "questions": "The question-type, comparative and object-tagging heads.",
    "quality": "The argument-quality head.",
    "relevance": "The relevance head (query-passage features + MiniLM embedding).",
    "stance": "The comparative and controversial stance heads.",
}


def _train_command(name: str, help_text: str):
    """`touche train NAME`: app.training.NAME.main on the data folder, output folder and seed."""

    def train(data: Path = DATA_OPTION, out: Path = MODELS_OPTION, seed: int = 13) -> None:
        from importlib import import_module

        with _errors(False):
            import_module(f"app.training.{name}").main(data, out, seed)

    train.__doc__ = help_text
    return train


for _name, _help in TRAINED_MODELS.items():
    train_app.command(_name)(_train_command(_name, _help))


def main() -> None:
    app()
