"""`touche report`: one self-contained HTML page comparing runs (per-topic nDCG, bootstrap intervals, paired tests,
stance confusion). Every score comes from `app.evaluate`, computed as `touche evaluate` computes it, so the page
and `touche evaluate` agree."""

from __future__ import annotations

import base64
import functools
import io
import logging
import math
import os
import stat
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from pathlib import Path

import numpy as np
from scipy import stats

from .errors import ToucheError
from .evaluate import Evaluation, evaluate_scored, read_run, topic_order
from .files import atomic_file, make_directory, os_reason, remove_empty, unwritable_folder
from .runfile import RUN_FILES, locate_run
from .topics import clean_field

log = logging.getLogger(__name__)

PLOTTED = ("nDCG@5 judged-only", "nDCG@10 judged-only")  # per qrels kind: bars, intervals and tests
DIFFERING_MEASURE = "relevance nDCG@5 judged-only"  # the measure of the "runs differ most" table
RESAMPLES = 10_000
SEED = 13
LEVEL = 0.95
DIFFERING_TOPICS = 10
# Resampled topics drawn at a time: 10,000 resamples of 100,000 topics at once asked for 7.45 GB of indices.
RESAMPLED_TOPICS_AT_ONCE = 1 << 22
# Per-topic bars past this many topics are unreadable and take minutes to lay out (20,000: 2 min 45 s); the
# per-topic tables still list every topic.
MAX_PLOTTED_TOPICS = 500
LEGEND_ROWS = 12  # runs in a legend column
MAX_FIGURE_INCHES = 24.0  # a figure's width: 280 runs drew the means 67,400 pixels wide
# Bidirectional controls in a name, path or topic id (U+202E in `--names`) turned the rest of their line around
# on the page, its numbers too ("0.7708" read "8077.0"); the page's own text holds none. Shown as U+FFFD.
_BIDI_SHOWN = dict.fromkeys([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)], "\ufffd")


@dataclass
class Confusion:
    """Stance labels of a run's judged documents: `counts[i][j]` documents judged `judged[i]` labelled `labels[j]`."""

    judged: list[str]
    labels: list[str]
    counts: list[list[int]]


@dataclass
class RunScores:
    """One run: `touche evaluate`'s numbers, the bootstrap interval of each plotted mean, its stance confusion."""

    name: str
    path: Path
    evaluation: Evaluation
    intervals: dict[str, tuple[float, float]]
    retrieved: int  # judged topics the run has documents for
    confusion: Confusion | None


@dataclass
class Comparison:
    """A run against the baseline (the first run) on one measure, paired over topics."""

    measure: str
    run: str
    difference: float  # mean of the run minus mean of the baseline
    wins: int
    ties: int
    losses: int
    t_test_p: float
    randomization_p: float


@dataclass
class Report:
    """Everything the page shows, as plain data; `render_html` only formats it."""

    qrels: dict[str, Path]  # relevance, quality, stance -> file
    runs: list[RunScores]
    measures: list[str]
    topics: list[str]  # the judged topics, in order
    comparisons: list[Comparison]
    differing: list[tuple[str, float]]  # (topic, max - min of DIFFERING_MEASURE over the runs), largest first
    resamples: int = RESAMPLES
    seed: int = SEED


def bootstrap_interval(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (scipy's): topics resampled with replacement, a fixed seed."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:  # one topic resamples to itself; scipy asks for two
        return float(data.mean()), float(data.mean())
    result = stats.bootstrap((data,), np.mean, n_resamples=resamples, confidence_level=level, method="percentile",
                             vectorized=True, rng=seed, batch=max(1, RESAMPLED_TOPICS_AT_ONCE // len(data)))
    low, high = result.confidence_interval
    return float(low), float(high)


def paired_t_test(run: Sequence[float], baseline: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test; with constant differences t is ±inf (p 0) or undefined (p 1)."""
    differences = np.subtract(run, baseline)
    if len(differences) < 2:
        return float("nan")
    if np.ptp(differences) == 0:
        return 1.0 if differences[0] == 0 else 0.0
    return float(stats.ttest_rel(run, baseline).pvalue)


def randomization_test(run: Sequence[float], baseline: Sequence[float], resamples: int = RESAMPLES,
                       seed: int = SEED) -> float:
    """Two-sided p-value of the paired randomization test: each topic's two scores swapped (its difference's sign
    flipped) at random; exact over all 2^n swaps when there are no more than `resamples` of them; undefined (NaN)
    for a single topic, as the t-test."""
    differences = np.subtract(run, baseline)
    if len(differences) < 2:  # one topic: nothing to swap against (scipy refuses it)
        return float("nan")
    result = stats.permutation_test((differences,), np.mean, vectorized=True, permutation_type="samples",
                                    n_resamples=resamples, rng=seed,
                                    batch=max(1, RESAMPLED_TOPICS_AT_ONCE // len(differences)))
    return float(result.pvalue)


def stance_confusion(stances: dict[tuple[str, str], str], truth: dict[tuple[str, str], str]) -> Confusion:
    """Judged label against the run's label over the run's judged documents (the pairs `touche evaluate` scores)."""
    counts = Counter((label, stances[key]) for key, label in truth.items() if key in stances)
    judged = sorted(set(truth.values()))
    labels = judged + sorted({label for _, label in counts} - set(judged))
    return Confusion(judged, labels, [[counts[(row, column)] for column in labels] for row in judged])


def run_names(runs: Sequence[Path], names: Sequence[str] | None) -> list[str]:
    """The given names, else each file's stem (a run.txt is named after its directory), numbered if they clash."""
    if names is not None:
        if len(names) != len(runs):
            raise ToucheError(f"--names has {len(names)} names for {len(runs)} runs")
        names = [clean_field(shown(name)) for name in names]  # "a\u200b" is "a", a tab or a line break a space
        if len(set(names)) != len(names) or not all(names):
            raise ToucheError("--names must be distinct and non-empty")
        return names
    guessed = [shown(_run_name(run)) for run in runs]
    clashing = {name for name, count in Counter(guessed).items() if count > 1}
    numbered = [f"{name} ({index})" if name in clashing else name for index, name in enumerate(guessed, 1)]
    return numbered if len(set(numbered)) == len(numbered) else [f"{name} ({index})" for index, name
                                                                  in enumerate(guessed, 1)]


def shown(text: str) -> str:
    """A name or path as the page shows it: bytes that were no UTF-8 in the file system or the command line (Python
    holds them as lone surrogates, which the plots and the page's UTF-8 refused) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _run_name(run: Path) -> str:
    """An output directory's name, also for its run.txt; else the run file's name without its extension."""
    if run.is_dir():
        return run.resolve().name
    return run.resolve().parent.name if run.name in RUN_FILES else run.stem


def _values(evaluation: Evaluation, measure: str, topics: Sequence[str]) -> list[float]:
    return [evaluation.per_topic[qid][measure] for qid in topics if measure in evaluation.per_topic[qid]]


def _score_run(name: str, path: Path, qrels: dict[str, Path], measures: Sequence[str]) -> tuple[RunScores, set[str]]:
    """Evaluate one run as `touche evaluate` does; also the judged topics it retrieved for."""
    run = locate_run(path)
    scored, stances = read_run(run)
    evaluation = evaluate_scored(run, scored, stances, qrels["relevance"], qrels.get("quality"), qrels.get("stance"))
    retrieved = {doc.query_id for doc in scored} & set(_judged_topics(evaluation))
    topics = sorted(evaluation.per_topic, key=topic_order)
    intervals = {measure: bootstrap_interval(_values(evaluation, measure, topics)) for measure in measures}
    confusion = stance_confusion(stances, evaluation.stance_truth) if "stance" in qrels else None
    return RunScores(name, path, evaluation, intervals, len(retrieved), confusion), retrieved


def _judged_topics(evaluation: Evaluation) -> list[str]:
    """The topics of the relevance qrels (evaluate_run scores each, 0 where the run has nothing), in order."""
    judged = (qid for qid, scores in evaluation.per_topic.items() if DIFFERING_MEASURE in scores)
    return sorted(judged, key=topic_order)


def _compare(baseline: RunScores, run: RunScores, measure: str, topics: Sequence[str]) -> Comparison:
    ours, theirs = _values(run.evaluation, measure, topics), _values(baseline.evaluation, measure, topics)
    signs = np.sign(np.subtract(ours, theirs))
    return Comparison(measure, run.name, run.evaluation.mean[measure] - baseline.evaluation.mean[measure],
                      int((signs > 0).sum()), int((signs == 0).sum()), int((signs < 0).sum()),
                      paired_t_test(ours, theirs), randomization_test(ours, theirs))


def _differing(runs: Sequence[RunScores], topics: Sequence[str]) -> list[tuple[str, float]]:
    """The topics whose DIFFERING_MEASURE scores spread most over the runs (|a - b| for two runs), ties by topic."""
    spreads = [(qid, float(np.ptp([run.evaluation.per_topic[qid][DIFFERING_MEASURE] for run in runs])))
               for qid in topics]
    spreads.sort(key=lambda item: -item[1])
    return [item for item in spreads if item[1] > 0][:DIFFERING_TOPICS]


def build_report(runs: Sequence[Path], qrels: Path, quality_qrels: Path | None = None,
                 stance_qrels: Path | None = None, names: Sequence[str] | None = None) -> Report:
    """Score every run as `touche evaluate` does and compare each to the first; ToucheError on unusable input."""
    if not runs:
        raise ToucheError("no runs to report on")
    given = Counter(path.resolve() for path in runs)
    if twice := [str(path) for path in runs if given[path.resolve()] > 1]:
        log.warning("the same run given more than once (%s): compared with itself, every difference is 0",
                    ", ".join(dict.fromkeys(twice)))
    files = {"relevance": qrels, "quality": quality_qrels, "stance": stance_qrels}
    files = {kind: path for kind, path in files.items() if path is not None}
    measures = [f"{kind} {name}" for kind in ("relevance", "quality") if kind in files for name in PLOTTED]
    with _said_once(logging.getLogger("app.evaluate")):  # a qrels file's warnings, once: not again for each run
        scored = [_score_run(name, path, files, measures) for name, path in zip(run_names(runs, names), runs)]
    if not set.intersection(*(retrieved for _, retrieved in scored)):
        raise ToucheError("the runs have no judged topic in common")
    scores = [run for run, _ in scored]
    topics = _judged_topics(scores[0].evaluation)
    comparisons = [_compare(scores[0], run, measure, topics) for run in scores[1:] for measure in measures]
    return Report(files, scores, measures, topics, comparisons, _differing(scores, topics))


@contextmanager
def _said_once(logger: logging.Logger) -> Iterator[None]:
    """Within the block, each of `logger`'s messages is said the first time only."""
    said: set[str] = set()

    def first(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in said:
            return False
        said.add(message)
        return True

    logger.addFilter(first)
    try:
        yield
    finally:
        logger.removeFilter(first)


def check_output(path: Path, inputs: Sequence[Path | None]) -> None:
    """Before any work: the page is not to replace one of its inputs (a run, a run directory's run file, qrels),
    which `-o run.txt` did without a word."""
    for given in filter(None, inputs):
        beside = given if given.is_dir() else given.parent if given.name in RUN_FILES else None  # a run directory's
        for candidate in [given, *(beside / name for name in RUN_FILES)] if beside is not None else [given]:
            if os.path.realpath(candidate) == os.path.realpath(path) or (
                    candidate.exists() and path.exists() and os.path.samefile(candidate, path)):
                if candidate != given and not candidate.exists():  # a run file's other name, beside the run
                    raise ToucheError(f"the report {path} would be a second run file beside the run {given} (TIRA "
                                      "rejects a directory holding both): choose another -o")
                raise ToucheError(f"the report {path} would replace its input {candidate}: choose another -o")
    target = Path(os.path.realpath(path))
    if not (target.exists() and not target.is_file()):  # a device or a pipe is written to as it is
        if (folder := unwritable_folder(target.parent)) is not None:  # it was said after the work
            raise ToucheError(f"cannot write {path}: {folder} is not writable (a read-only mount, another user's): "
                              "choose another -o")


def write_report(markup: str, path: Path) -> None:
    """Write the page to a temporary file beside `path` and rename it, so no reader ever sees half a page. A link
    is followed (the page replaces its target, the link stays); a device or a pipe (`-o /dev/stdout`) is written
    to, as a shell's `>` writes: the rename replaced it with a file, /dev/null too where run as root."""
    try:
        try:
            kind = os.stat(path).st_mode  # through links; a loop of them is an error, as it is to `>`
        except (FileNotFoundError, NotADirectoryError):  # to be made (make_directory names what is in the way)
            kind = None
        if kind is not None and not stat.S_ISREG(kind) and not stat.S_ISDIR(kind):
            with open(path, "w", encoding="utf-8") as out:  # the path given: /dev/stdout's target may be a pipe
                out.write(markup)
            return
        target = Path(os.path.realpath(path))
        made = make_directory(target.parent)
        try:
            with atomic_file(target) as out:
                out.write(markup)
        except OSError:  # a full disk: the directories made for the page go with it
            remove_empty(made)
            raise
    except OSError as error:
        raise ToucheError(f"cannot write {path}: {os_reason(error)}") from None


# --- HTML ---------------------------------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; white-space: nowrap; }
div.tables { display: flex; flex-wrap: wrap; gap: 0 2em; align-items: flex-start; }
figure { margin: 1em 0; }
img { max-width: 100%; height: auto; }
code { font-size: 0.95em; }
p.note { color: #555; max-width: 60em; }
"""


def render_html(report: Report) -> str:
    """The report as one HTML page: inputs, means, comparisons, per-topic scores, stance, differing topics."""
    title = f"touche report: {' vs '.join(run.name for run in report.runs)}"
    sections = [_inputs(report), _means(report), _comparisons(report), _per_topic(report), _stance(report),
                _differing_table(report)]
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
            f"<style>{_STYLE}</style>\n</head>\n<body>\n<h1>{escape(title)}</h1>\n"
            + "\n".join(section for section in sections if section) + "\n</body>\n</html>\n").translate(_BIDI_SHOWN)


def _number(value: float, digits: int = 4) -> str:
    """A table cell with the value rounded for reading and exact in `data-value` for parsing."""
    return f'<td class="number" data-value="{value!r}">{value:.{digits}f}</td>'


def _p_value(value: float) -> str:
    """A p-value cell: four decimals, or two significant digits below 0.0001 (never a misleading 0.0000)."""
    text = f"{value:.1e}" if 0 < value < 1e-4 else "–" if np.isnan(value) else f"{value:.4f}"
    return f'<td class="number" data-value="{value!r}">{text}</td>'


def _row(cells: Sequence[str]) -> str:
    return "<tr>" + "".join(cells) + "</tr>"


def _header(names: Sequence[str]) -> str:
    return "<tr>" + "".join(f"<th>{escape(name)}</th>" for name in names) + "</tr>"


def _table(table_id: str, caption: str, header: Sequence[str], rows: Sequence[str]) -> str:
    return (f'<table id="{escape(table_id)}">\n<caption>{escape(caption)}</caption>\n<thead>{_header(header)}'
            f"</thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>")


def _side_by_side(tables: Sequence[str]) -> str:
    return '<div class="tables">\n' + "\n".join(tables) + "\n</div>"


def _slug(measure: str) -> str:
    return measure.replace(" ", "-").replace("@", "")


def _inputs(report: Report) -> str:
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    qrels = [_row([f"<td>{escape(kind)} qrels</td>", f"<td><code>{escape(shown(str(path)))}</code></td>"])
             for kind, path in report.qrels.items()]
    runs = [_row([f"<td>{escape(run.name)}</td>", f"<td><code>{escape(shown(str(run.path)))}</code></td>",
                  f'<td class="number">{run.retrieved} of {len(report.topics)}</td>']) for run in report.runs]
    return (f"<p>Generated by <code>touche report</code> on {generated}. Every score is the one "
            "<code>touche evaluate</code> prints for the same run and qrels: nDCG judged-only (unjudged documents "
            "dropped before the cut-off, as Touché reports it), grade −2 counted as 0, a judged topic the run does "
            "not retrieve for scores 0.</p>\n<h2>Inputs</h2>\n"
            + _table("qrels", "Judgements", ["judgements", "file"], qrels) + "\n"
            + _table("runs", "Runs (the first is the baseline)", ["run", "file", "judged topics retrieved"], runs))


def _means(report: Report) -> str:
    names = [run.name for run in report.runs]
    measures = list(report.runs[0].evaluation.mean)
    rows = [_row([f"<th>{escape(measure)}</th>"]
                 + [_number(run.evaluation.mean[measure], 0 if measure.endswith("documents") else 4)
                    for run in report.runs]) for measure in measures]
    intervals = [_row([f"<th>{escape(measure)}</th>", f"<td>{escape(run.name)}</td>",
                       _number(run.evaluation.mean[measure]), _number(run.intervals[measure][0]),
                       _number(run.intervals[measure][1])])
                 for measure in report.measures for run in report.runs]
    return ("<h2>Means</h2>\n" + _table("means", f"Means over {_judged(report)}",
                                        ["measure", *names], rows) + "\n"
            + _figure(_means_figure(report), "Mean of each run with its 95% bootstrap interval") + "\n"
            + f'<p class="note">95% interval: percentile bootstrap of the mean, {report.resamples:,} resamples of '
              f"the topics with replacement, seed {report.seed}.</p>\n"
            + _table("intervals", "95% bootstrap intervals of the means", ["measure", "run", "mean", "low", "high"],
                     intervals))


def _judged(report: Report) -> str:
    """The topics the means are over, in words: the relevance qrels' judged topics, and the quality qrels' where they
    judge fewer of them (their means are over those)."""
    quality = f"quality {PLOTTED[0]}"
    if quality not in report.measures:
        return f"the {len(report.topics)} judged topics"
    judged = sum(quality in report.runs[0].evaluation.per_topic[qid] for qid in report.topics)
    return f"the {len(report.topics)} judged topics" + (f" (quality: the {judged} of them its qrels judge)"
                                                         if judged < len(report.topics) else "")


def _comparisons(report: Report) -> str:
    if not report.comparisons:
        return "<h2>Significance</h2>\n<p>One run: nothing to compare.</p>"
    baseline = report.runs[0].name
    rows = [_row([f"<th>{escape(c.measure)}</th>", f"<td>{escape(c.run)}</td>", _number(c.difference),
                  f'<td class="number">{c.wins} / {c.ties} / {c.losses}</td>', _p_value(c.t_test_p),
                  _p_value(c.randomization_p)]) for c in report.comparisons]
    return ("<h2>Significance</h2>\n"
            f'<p class="note">Each run against the baseline <strong>{escape(baseline)}</strong> (the first run), '
            f"paired over {_judged(report)}; two-sided p-values of the paired t-test and of the "
            f"paired randomization test (each topic's two scores swapped at random, {report.resamples:,} "
            f"resamples with seed {report.seed}, or all 2<sup>n</sup> swaps when fewer; sampled, its smallest p is "
            f"2/{report.resamples + 1:,}). No correction for multiple comparisons.</p>\n"
            + _table("comparisons", f"Runs against {baseline}",
                     ["measure", "run", "mean difference", "wins / ties / losses", "t-test p", "randomization p"],
                     rows))


def _per_topic(report: Report) -> str:
    parts = ["<h2>Per topic</h2>"]
    if len(report.topics) > MAX_PLOTTED_TOPICS:
        parts.append(f'<p class="note">{len(report.topics)} topics: per-topic bars are drawn for at most '
                     f"{MAX_PLOTTED_TOPICS}; the tables below list every topic.</p>")
    else:
        for kind in ("relevance", "quality"):
            measures = [measure for measure in report.measures if measure.startswith(kind)]
            if measures:
                parts.append(_figure(_per_topic_figure(report, measures), f"Per-topic {kind} nDCG of each run"))
    tables = []
    for measure in report.measures:
        rows = [_row([f"<th>{escape(qid)}</th>"] + [_number(run.evaluation.per_topic[qid][measure])
                                                    for run in report.runs])
                for qid in report.topics if measure in report.runs[0].evaluation.per_topic[qid]]
        tables.append(_table(f"per-topic-{_slug(measure)}", measure, ["topic", *(run.name for run in report.runs)],
                             rows))
    return "\n".join([*parts, _side_by_side(tables)])


def _stance(report: Report) -> str:
    runs = [run for run in report.runs if run.confusion is not None]
    if not runs:
        return ""
    parts = ["<h2>Stance</h2>", '<p class="note">Rows: the judged label; columns: the run\'s label, over the '
             "judged documents the run retrieved (the documents <code>touche evaluate</code>'s stance macro-F1 "
             "is computed on).</p>"]
    tables = []
    for index, run in enumerate(runs):
        confusion = run.confusion
        largest = max((max(row) for row in confusion.counts), default=0) or 1
        rows = [_row([f"<th>{escape(judged)}</th>"] + [_count(count, largest) for count in counts])
                for judged, counts in zip(confusion.judged, confusion.counts)]
        caption = f"{run.name} (stance macro-F1 {run.evaluation.mean['stance macro-F1']:.4f})"
        tables.append(_table(f"confusion-{index}", caption, ["judged \\ run", *confusion.labels], rows))
    return "\n".join([*parts, _side_by_side(tables)])


def _count(count: int, largest: int) -> str:
    """A confusion cell shaded by its share of the largest count."""
    return (f'<td class="number" data-value="{count}" style="background: rgba(31, 119, 180, '
            f'{0.6 * count / largest:.2f})">{count}</td>')


def _differing_table(report: Report) -> str:
    if len(report.runs) < 2:
        return ""
    heading = "<h2>Topics where the runs differ most</h2>\n"
    if not report.differing:
        return heading + f"<p>The runs score every topic the same ({DIFFERING_MEASURE}).</p>"
    spread = "|difference|" if len(report.runs) == 2 else "max − min"
    rows = [_row([f"<th>{escape(qid)}</th>", *(_number(run.evaluation.per_topic[qid][DIFFERING_MEASURE])
                                               for run in report.runs), _number(value)])
            for qid, value in report.differing]
    caption = f"Largest per-topic differences in {DIFFERING_MEASURE} (at most {DIFFERING_TOPICS})"
    return heading + _table("differing", caption, ["topic", *(run.name for run in report.runs), spread], rows)


# --- figures (matplotlib's object API, Agg, no global pyplot state) ---------------------------------------------------


def _figure(png: bytes, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{escape(caption)}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure  # imported here: only the report draws

    return Figure(figsize=(width, height), layout="constrained")


def _label(measure: str) -> str:
    """`relevance nDCG@5 judged-only` as two short lines (every plotted measure is judged-only)."""
    return measure.removesuffix(" judged-only").replace(" ", "\n")


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # a glyph the font lacks (emoji, CJK), a layout that cannot fit a long topic id:
        warnings.simplefilter("ignore")  # matplotlib's multi-line warnings named its own source lines on stderr
        figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def _plain_text(draw):
    """Run names, file names and topic ids drawn as written: matplotlib reads text between two `$` as math, and a
    name like `x$_$` ended the report in a parse error."""
    @functools.wraps(draw)
    def drawn(*args):
        from matplotlib import rc_context

        with rc_context({"text.parse_math": False}):
            return draw(*args)
    return drawn


def _bars(axes, groups: Sequence[str], runs: Sequence[RunScores], heights, errors=None) -> None:
    """Grouped bars: one group per label, one bar per run (colour fixed by the run's position)."""
    width = 0.8 / len(runs)
    positions = np.arange(len(groups))
    for index, run in enumerate(runs):  # a label opening with "_" is one matplotlib leaves out of the legend
        axes.bar(positions + (index - (len(runs) - 1) / 2) * width, heights[index], width,
                 label=" " + run.name if run.name.startswith("_") else run.name, color=_colour(index, len(runs)),
                 yerr=None if errors is None else errors[index], capsize=3)
    axes.set_xticks(positions, groups)
    axes.set_ylim(0, 1.05)
    axes.grid(axis="y", alpha=0.3)


def _colour(index: int, runs: int):
    """A run's colour, distinct from the others': matplotlib's 10 cycle colours (C10 is C0 again), 20 of tab20,
    else evenly spaced along turbo."""
    from matplotlib import colormaps

    if runs <= 10:
        return f"C{index}"
    if runs <= 20:  # tab20's dark shades first, then their light pairs: runs side by side differ in hue
        return colormaps["tab20"](2 * index if index < 10 else 2 * (index - 10) + 1)
    return colormaps["turbo"](index / (runs - 1))


def _legend(axes, runs: int) -> None:
    """The runs' legend beside the axes, in columns of at most LEGEND_ROWS (more were cut off the figure)."""
    axes.legend(loc="upper left", bbox_to_anchor=(1, 1), ncols=math.ceil(runs / LEGEND_ROWS), fontsize="small")


@_plain_text
def _means_figure(report: Report) -> bytes:
    figure = _new_figure(min(max(5.0, 2.0 + 0.6 * len(report.measures) * len(report.runs)), MAX_FIGURE_INCHES), 3.6)
    axes = figure.add_subplot()
    heights = [[run.evaluation.mean[measure] for measure in report.measures] for run in report.runs]
    errors = [[[run.evaluation.mean[m] - run.intervals[m][0] for m in report.measures],
               [run.intervals[m][1] - run.evaluation.mean[m] for m in report.measures]] for run in report.runs]
    _bars(axes, [_label(measure) for measure in report.measures], report.runs, heights, np.clip(errors, 0, None))
    axes.set_ylabel("mean (95% interval)")
    _legend(axes, len(report.runs))
    return _png(figure)


@_plain_text
def _per_topic_figure(report: Report, measures: Sequence[str]) -> bytes:
    topics = [qid for qid in report.topics if measures[0] in report.runs[0].evaluation.per_topic[qid]]
    width = min(max(6.0, 0.1 * len(topics) * len(report.runs) + 2.5), MAX_FIGURE_INCHES)
    figure = _new_figure(width, 2.6 * len(measures) + 0.6)
    for index, measure in enumerate(measures):
        axes = figure.add_subplot(len(measures), 1, index + 1)
        heights = [[run.evaluation.per_topic[qid][measure] for qid in topics] for run in report.runs]
        _bars(axes, topics, report.runs, heights)
        axes.set_ylabel(_label(measure))
        axes.tick_params(axis="x", labelrotation=90 if len(topics) > 12 else 0, labelsize=8)
        if index == 0:
            _legend(axes, len(report.runs))
    figure.supxlabel("topic")
    return _png(figure)
