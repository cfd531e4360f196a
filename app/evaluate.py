"""Effectiveness of a run: nDCG (judged-only as Touché reports it, and trec_eval's) and stance macro-F1."""

from __future__ import annotations

import logging
import math
import re
import statistics
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import ir_measures
from sklearn.metrics import f1_score

from .errors import ToucheError, counted
from .files import not_utf8, open_packed, os_reason
from .records import COMPARATIVE_LABELS, CONTROVERSIAL_LABELS, DECIMAL
from .runfile import NO_STANCE, STANCE_LABELS, locate_run, open_run, other_space, read_problem

log = logging.getLogger(__name__)

MEASURES = {
    "nDCG@5 judged-only": ir_measures.nDCG(judged_only=True) @ 5,
    "nDCG@10 judged-only": ir_measures.nDCG(judged_only=True) @ 10,
    "nDCG@5": ir_measures.nDCG @ 5,
    "nDCG@10": ir_measures.nDCG @ 10,
}
# Touché grades run from -2 to 3. trec_eval's nDCG takes memory for each grade up to the highest (2**31 - 1: 16 GB
# and a hang in C, deaf to SIGTERM; under a memory cap, scores of 0 for a perfect run).
MAX_GRADE = 1000
STANCE_ORDER = (COMPARATIVE_LABELS, CONTROVERSIAL_LABELS)  # as errors list them
MAX_LINE_CHARS = 1 << 16  # of a qrels line
# Of a qrels file, read whole: official qrels hold kilobytes to a few MB; 117 kB gzipped of 10 million lines took
# 1.5 GB and 28 s.
MAX_QRELS_CHARS = 64 << 20
# A grade as trec_eval reads it (C's atol): an integer, or one written with zero decimals ("4.0", as Touché 2020
# Task 1's first qrels write them); Python's int() also takes "1_0" and other scripts' digits, which atol reads as
# 1 and 0, and "1.5" would be 1 to trec_eval and 1.5 to others.
_GRADE = re.compile(r"([+-]?[0-9]+)(?:\.0*)?")


@dataclass
class Evaluation:
    """Mean scores by name (e.g. `relevance nDCG@5 judged-only`) and the same per topic; with stance qrels, the
    stance judgements the stance macro-F1 is scored against (those of the relevance qrels' topics)."""

    mean: dict[str, float]
    per_topic: dict[str, dict[str, float]]
    stance_truth: dict[tuple[str, str], str] = field(default_factory=dict)


def open_qrels(path: Path) -> "_BoundedLines":
    """A qrels file's lines, read through gzip where its name ends in .gz; a BOM opening the file or a line (a file
    saved with one, joined by `cat`) is skipped: it would make its topic "\ufeff1", and take its judgements away."""
    return _BoundedLines(open_packed(path, "rt", encoding="utf-8-sig"))


class _BoundedLines:
    """A text file's lines, each of at most MAX_LINE_CHARS and all of at most MAX_QRELS_CHARS (past them a
    ValueError): a qrels line is a few dozen characters, and an endless one (`--qrels /dev/zero`) filled the memory."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def __iter__(self) -> Iterator[str]:
        read = 0
        for number, line in enumerate(iter(lambda: self.stream.readline(MAX_LINE_CHARS + 1), ""), 1):
            if len(line.rstrip("\n")) > MAX_LINE_CHARS:
                raise ValueError(f"line {number} is longer than {MAX_LINE_CHARS:,} characters")
            read += len(line)
            if read > MAX_QRELS_CHARS:
                raise ValueError(f"more than {MAX_QRELS_CHARS >> 20} MB of judgements (Touché's hold kilobytes)")
            yield line.removeprefix("\ufeff")

    def __enter__(self) -> "_BoundedLines":
        return self

    def __exit__(self, *exception) -> None:
        self.stream.close()


def _unreadable(path: Path, kind: str, error: Exception) -> ToucheError:
    """A qrels file that cannot be opened (missing, unreadable) or read as `kind`, in one line."""
    if isinstance(error, OSError) and error.errno is not None:
        return ToucheError(f"{path}: {os_reason(error)}")
    if isinstance(error, UnicodeDecodeError):
        return ToucheError(f"{path}: {not_utf8(error, path)}")
    return ToucheError(f"{path}: not a {kind} file ({error or 'the gzip file ends too soon'})")


def judged_once(path: Path, judgements: Iterable[tuple[tuple[str, str], object]]) -> dict[tuple[str, str], object]:
    """Each (topic, document)'s last judgement, as trec_eval keeps it; a warning names documents judged otherwise
    before (the score depends on which judgement counts)."""
    last, conflicts = {}, set()
    for key, value in judgements:
        if last.get(key, value) != value:
            conflicts.add(key)
        last[key] = value
    if conflicts:
        qid, doc_id = min(conflicts)
        log.warning("%s: %s judged twice, differently (e.g. %s for topic %s); the last judgement counts, as in "
                    "trec_eval", path, counted(len(conflicts), "document"), doc_id, qid)
    return last


def _graded(lines: Iterable[str]) -> Iterator[tuple[tuple[str, str], int]]:
    """((topic, document), grade) of each qrels line, its grade read as trec_eval reads it (`_GRADE`)."""
    for number, columns in _columns(lines, 4):
        qid, _iteration, doc_id, grade = columns
        if not (match := _GRADE.fullmatch(grade)):
            raise ValueError(f"line {number}: grade {grade!r} is not an integer as trec_eval reads it")
        yield (qid, doc_id), max(int(match[1]), 0)


def _columns(lines: Iterable[str], count: int) -> Iterator[tuple[int, list[str]]]:
    """(line number, columns) of each line that is not blank; a line of another number of columns is a ValueError
    naming it (in a run of a million lines, "not enough values to unpack" could not be found)."""
    for number, line in enumerate(lines, 1):
        if columns := line.split():
            if len(columns) != count:
                raise ValueError(f"line {number}: {len(columns)} columns, not {count}")
            yield number, columns


def read_qrels(path: Path) -> list[ir_measures.Qrel]:
    """Graded qrels; negative grades (2020-21 Task 1 spam, −2) count as 0, as the organizers do."""
    try:
        with open_qrels(path) as lines:
            judgements = list(_graded(lines))
    except (OSError, ValueError, IndexError, EOFError, zlib.error) as error:  # EOFError: a gzip cut short
        raise _unreadable(path, "TREC qrels", error) from None
    for (qid, _), grade in judgements:
        if grade > MAX_GRADE:
            raise ToucheError(f"{path}: grade {grade} of topic {qid} is beyond {MAX_GRADE}")
    return [ir_measures.Qrel(qid, doc_id, grade) for (qid, doc_id), grade in judged_once(path, judgements).items()]


def read_run(path: Path) -> tuple[list[ir_measures.ScoredDoc], dict[tuple[str, str], str]]:
    """The scored documents of a run and each one's stance label (column 2). A document a topic ranks twice, which
    `touche validate` rejects, counts once, by its best-scored line (of equal scores the better rank, then the
    first), as Touché's evaluation reads it, with a warning."""
    best: dict[tuple[str, str], tuple[float, float, str]] = {}  # (score, -rank, stance)
    twice, spaced = [], []
    try:
        with open_run(path) as lines:
            for _, (qid, stance, doc_id, rank, score, _tag) in _columns(_spaces_seen(lines, spaced), 6):
                try:
                    value = float(score)
                except ValueError:  # said as the score of its document, not in float()'s words
                    value = None
                if value is not None and not math.isfinite(value):  # trec_eval would rank it anywhere
                    raise ValueError(f"score {score} of {doc_id} for topic {qid} is no finite number")
                if value is None or not DECIMAL.fullmatch(score):  # float() takes "1_0", other scripts' digits
                    raise ValueError(f"score {score!r} of {doc_id} for topic {qid} is not a number as trec_eval "
                                     "reads numbers")
                key, line_rank = (qid, doc_id), _rank(rank)
                if key in best:
                    twice.append(key)
                    if (value, -line_rank) <= best[key][:2]:
                        continue
                best[key] = (value, -line_rank, stance)
    except UnicodeDecodeError as error:
        raise ToucheError(f"{path}: {not_utf8(error, path)}") from None
    except (OSError, ValueError, EOFError, zlib.error) as error:  # EOFError: a gzip cut short
        if isinstance(error, OSError) and error.errno is not None:  # unreadable, not malformed
            raise ToucheError(f"{path}: {os_reason(error)}") from None
        raise ToucheError(f"{path}: not a 6-column TREC run ({read_problem(error)})") from None
    if not best:
        raise ToucheError(f"{path}: an empty run")
    if twice:
        qid, doc_id = twice[0]
        log.warning("%s: %s ranked more than once in a topic (e.g. %s for topic %s); each counts once, by its "
                    "best-scored line, as Touché's evaluation reads it (`touche validate` rejects such a run)",
                    path, counted(len(set(twice)), "document"), doc_id, qid)
    if spaced:  # as `touche validate` warns
        number, space = spaced[0]
        log.warning("%s: U+%04X between or before columns (line %d), which trec_eval reads as part of a column; "
                    "scored as Touché's evaluation (Python) reads it, split there", path, ord(space), number)
    scored = [ir_measures.ScoredDoc(qid, doc_id, value) for (qid, doc_id), (value, _, _) in best.items()]
    _say_ties(path, scored)
    if marked := next((doc.query_id for doc in scored if doc.query_id.startswith("\ufeff")), None):
        # as `touche validate` warns: the official evaluation reads it so (at the file's start or a line's)
        log.warning("%s: a byte order mark (U+FEFF) before topic %r makes it another topic, which no qrels judge, "
                    "as trec_eval reads it; scored so", path, marked[1:])
    return scored, {key: stance for key, (_, _, stance) in best.items()}


def _spaces_seen(lines: Iterable[str], spaced: list[tuple[int, str]]) -> Iterator[str]:
    """The lines, the first whitespace among them that trec_eval does not split at (`runfile.other_space`) kept in
    `spaced` as (line number, character)."""
    for number, line in enumerate(lines, 1):
        if not spaced and (space := other_space(line)):
            spaced.append((number, space))
        yield line


def _say_ties(path: Path, scored: list[ir_measures.ScoredDoc]) -> None:
    """Warn where a topic gives documents equal scores: trec_eval (and ir_measures) order them by document id,
    descending, whatever the rank column says, and so are they scored here; an evaluator that follows the ranks
    scores them otherwise."""
    scores = defaultdict(set)
    tied = set()
    for doc in scored:
        if doc.score in scores[doc.query_id]:
            tied.add(doc.query_id)
        scores[doc.query_id].add(doc.score)
    if tied:
        log.warning("%s: documents of equal scores in %s (e.g. topic %s); scored as trec_eval orders them, by "
                    "document id (descending), not by rank", path, counted(len(tied), "topic"),
                    min(tied, key=topic_order))


def _rank(text: str) -> float:
    """A run line's rank, which decides between a document's lines of equal score; the last of all if unreadable
    (evaluate scores by the score column, as trec_eval does)."""
    try:
        return float(int(text))
    except ValueError:
        return math.inf


def read_stance_qrels(path: Path) -> dict[tuple[str, str], str]:
    """{(qid, doc_id): stance label} of a stance qrels file (`qid 0 doc_id LABEL`), a label judged twice its last."""
    try:
        with open_qrels(path) as lines:
            return judged_once(path, (((qid, doc_id), label) for _, (qid, _, doc_id, label) in _columns(lines, 4)))
    except (OSError, ValueError, EOFError, zlib.error) as error:
        raise _unreadable(path, "stance qrels", error) from None


def evaluate_run(run: Path, qrels: Path, quality_qrels: Path | None = None,
                 stance_qrels: Path | None = None) -> Evaluation:
    """The run's scores against the qrels; a run none of whose topics the relevance qrels judge is an error."""
    run = locate_run(run)
    return evaluate_scored(run, *read_run(run), qrels, quality_qrels, stance_qrels)


def evaluate_scored(run: Path, scored: list[ir_measures.ScoredDoc], stances: dict[tuple[str, str], str],
                    qrels: Path, quality_qrels: Path | None = None, stance_qrels: Path | None = None) -> Evaluation:
    """`evaluate_run` on the run file `run` as `read_run` has read it."""
    mean: dict[str, float] = {}
    per_topic: dict[str, dict[str, float]] = defaultdict(dict)
    judged_topics: set[str] = set()
    truth: dict[tuple[str, str], str] = {}
    run_topics = {doc.query_id for doc in scored}
    for prefix, path in (("relevance", qrels), ("quality", quality_qrels)):
        if path is None:
            continue
        judgements = read_qrels(path)
        if not judgements:  # an empty file, blank lines: it was said to judge none of the run's topics
            raise ToucheError(f"{path}: holds no judgements")
        if prefix == "relevance":
            judged_topics = {qrel.query_id for qrel in judgements}
            if not run_topics & judged_topics:
                zeros = {qid.lstrip("0") for qid in run_topics} & {qid.lstrip("0") for qid in judged_topics}
                hint = " (their topic numbers differ by leading zeros: '001' is not '1')" if zeros else ""
                raise ToucheError(f"{run}: none of its topics is judged in {path}{hint}")
        else:
            kept = _relevance_topics({qrel.query_id for qrel in judgements}, judged_topics, path, qrels)
            if not run_topics & kept:  # its means were 0.0000, said as scores
                raise ToucheError(f"{run}: none of its topics is judged in {path} (of the topics {qrels.name} "
                                  "judges)")
            judgements = [qrel for qrel in judgements if qrel.query_id in kept]
        _say_coverage(run, scored, judgements, path)
        for name, measure in MEASURES.items():
            key = f"{prefix} {name}"
            values = {m.query_id: m.value for m in measure.iter_calc(judgements, scored)}
            for qid, value in values.items():
                per_topic[qid][key] = value
            mean[key] = statistics.fmean(values.values()) if values else 0.0
    if stance_qrels is not None:
        truth = read_stance_qrels(stance_qrels)
        _check_stance_labels(stance_qrels, truth)
        labels = set(truth.values())  # a topic left out below leaves its labels in the mean, as Touché's does
        kept = _relevance_topics({qid for qid, _ in truth}, judged_topics, stance_qrels, qrels)
        if truth and not kept:
            raise ToucheError(f"{stance_qrels}: judges none of the topics {qrels} judges")
        truth = {key: label for key, label in truth.items() if key[0] in kept}
        if not run_topics & {qid for qid, _ in truth}:
            raise ToucheError(f"{run}: none of its topics is judged in {stance_qrels}")
        pairs = [(label, stances[key]) for key, label in truth.items() if key in stances]
        _check_task(run, stance_qrels, {label for _, label in pairs}, labels)
        by_topic, topic_labels = defaultdict(list), defaultdict(set)
        for (qid, doc_id), label in truth.items():
            topic_labels[qid].add(label)
            if (qid, doc_id) in stances:
                by_topic[qid].append((label, stances[(qid, doc_id)]))
        if not pairs:
            log.warning("%s: none of its documents is judged in %s: its stance macro-F1 is 0 (the stance qrels of "
                        "another corpus?)", run, stance_qrels.name)
        elif all(label in NO_STANCE for _, label in pairs):
            log.warning("%s: labels no stance (Q0) on the documents %s judges: its stance macro-F1 is 0", run,
                        stance_qrels.name)
        # Macro-F1 over every label the judgements use, as Touché's evaluation averages it: a judged label the run
        # never predicts rightly counts 0, even where none of its judged documents is in the run.
        mean["stance macro-F1"] = _macro_f1(pairs, labels)
        mean["stance judged documents"] = float(len(pairs))
        for qid, topic_pairs in by_topic.items():
            per_topic[qid]["stance macro-F1"] = _macro_f1(topic_pairs, topic_labels[qid])
    return Evaluation(mean, dict(per_topic), truth)


def _relevance_topics(topics: set[str], judged: set[str], path: Path, qrels: Path) -> set[str]:
    """Of the topics quality or stance qrels (`path`) judge, those the relevance qrels judge too: Touché averages
    every measure over the same topics. A warning counts the topics left out."""
    left_out = topics - judged
    if left_out:
        log.warning("%s: %s not judged in %s left out (e.g. topic %s): the means are over the relevance qrels' topics",
                    path, counted(len(left_out), "topic"), qrels.name, min(left_out, key=topic_order))
    return topics & judged


def _say_coverage(run: Path, scored: list[ir_measures.ScoredDoc], judgements: list[ir_measures.Qrel],
                  path: Path) -> None:
    """Warn where the means count what the run lacks: judged topics it does not hold score 0 in them (as in the
    organizers' evaluation), and a run none of whose documents is judged scores 0 everywhere."""
    run_topics, judged_topics = {doc.query_id for doc in scored}, {qrel.query_id for qrel in judgements}
    if judged_topics - run_topics:
        log.warning("%s: %d of the %d topics %s judges are not in the run; they count 0 in the means", run,
                    len(judged_topics - run_topics), len(judged_topics), path.name)
    judged = {(qrel.query_id, qrel.doc_id) for qrel in judgements}
    if not any((doc.query_id, doc.doc_id) in judged for doc in scored):
        log.warning("%s: none of its documents is judged in %s: every score is 0 (the qrels of another corpus?)",
                    run, path.name)


def topic_order(qid: str) -> tuple[int, str]:
    """Sort key of topic ids: numbers in numeric order ("2" before "10"), as the tables list them."""
    return len(qid), qid


def _check_stance_labels(stance_qrels: Path, truth: dict[tuple[str, str], str]) -> None:
    """Stance qrels none of whose labels is a stance label (relevance grades 0, 1, 2) are an error naming them; a
    few that are none ("second", "NO" and a zero-width space) a warning: each is a class of the macro-F1."""
    judged, known = set(truth.values()), set().union(*STANCE_LABELS.values())
    if odd := sorted(key for key, label in truth.items() if label not in known) if judged & known else []:
        qid, doc_id = min(odd)
        log.warning("%s: %s of no stance label (e.g. %r for %s in topic %s), each label counted as a class of its "
                    "own in the stance macro-F1", stance_qrels, counted(len(odd), "judgement"), truth[qid, doc_id],
                    doc_id, qid)
    if judged and not judged & known:
        raise ToucheError(f"{stance_qrels}: its labels ({', '.join(sorted(judged)[:10])}) are no stance labels "
                          f"({' | '.join(', '.join(labels) for labels in STANCE_ORDER)}): relevance qrels?")


def _check_task(run: Path, stance_qrels: Path, given: set[str], judged: set[str]) -> None:
    """A run whose stance labels all belong to the other task than the judgements' is an error, not a macro-F1 of
    0; NO is both tasks' label, so the other labels tell the task. Labels in small letters are said as such."""
    given, judged = given - NO_STANCE - {"NO"}, judged - {"NO"}
    tasks = [labels for labels in STANCE_LABELS.values() if judged <= labels] or [judged]
    if given and judged and not given & tasks[0]:  # all the run's sides would be misses
        advice = ("labels are written in capitals, as the judgements write them" if {label.upper() for label in given}
                  & tasks[0] else "a run of another task?")
        raise ToucheError(f"{run}: its stance labels ({', '.join(sorted(given))}) are none of those in "
                          f"{stance_qrels} ({', '.join(sorted(judged))}); {advice}")


def _macro_f1(pairs: list[tuple[str, str]], labels: set[str]) -> float:
    """Macro-F1 of (judged, given) label pairs over `labels` (a run's Q0 counts as a wrong label)."""
    if not pairs:
        return 0.0
    truth, predicted = zip(*pairs)
    return float(f1_score(truth, predicted, labels=sorted(labels), average="macro", zero_division=0))
