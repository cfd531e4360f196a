"""TREC run files: writing them atomically with Touché's rules, and validating them as TIRA does."""

from __future__ import annotations

import io
import math
import os
import re
import unicodedata
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .errors import ToucheError, counted
from .files import atomic_file, discard_output, not_a_file, not_utf8, open_packed, os_reason, prepare_output
from .metadata import METADATA_FILE
from .records import COMPARATIVE_LABELS, CONTROVERSIAL_LABELS, DECIMAL, INTEGER, RunRow, record_id

RUN_FILE = "run.txt"
# A run directory holds one of these; an existing one is replaced only with --overwrite.
RUN_FILES = (RUN_FILE, RUN_FILE + ".gz")
SCORE_DECIMALS = 6
MAX_BYTES = 75 * 1024 * 1024
# A gzipped run is bounded as stored by MAX_BYTES (TIRA's limit), and read up to this many times as much unpacked: a
# few MB of gzip may hold gigabytes, but 1,000 topics of 1,000 lines with ClueWeb22's ids (88 MB unpacked, 16 MB
# stored) are a run TIRA accepts, and were refused at 75 MB unpacked.
UNPACKED_FACTOR = 4
MAX_LISTED = 1000  # errors, and warnings, listed by `touche validate`; the rest are counted
# TIRA's check_format: a run holds at least this many lines and topics.
MIN_LINES, MIN_TOPICS = 5, 3
STANCE_LABELS = {"comparative": set(COMPARATIVE_LABELS), "controversial": set(CONTROVERSIAL_LABELS)}
# A run line's second column where it labels no stance: Touché's Q0 (q0 too), and trec_eval's plain runs' 0 (a
# Touché 2020/21 Task 1 run written so), which TIRA accepts: trec_eval ignores the column.
NO_STANCE = frozenset({"Q0", "q0", "0"})
_TEMPORARY_PREFIX = ".run."
_SAFE_ID = re.compile(r"^[\w.:/@+=-]+$")
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}\Z")  # trec_eval reads a C long
# Whitespace TIRA's check (and Python's split) splits at, C's isspace() does not: U+00A0, U+3000, but also the
# ASCII separators U+001C-U+001F.
_OTHER_SPACE = re.compile(r"[^\S \t\n\r\x0b\x0c]")


def ranked_rows(qid: str, doc_ids: list[str], scores: list[float], stances: list[str] | None,
                tag: str, depth: int) -> list[RunRow]:
    """One topic's rows: sorted by score, deduplicated, cut at `depth`, ranks 1..n.

    Tied scores keep the order they are given in (the caller's deterministic tie-break, e.g. the first-stage
    rank). Scores are made strictly decreasing at the printed precision, so trec_eval's sort by score agrees
    with our ranks.
    """
    stances = stances or ["Q0"] * len(doc_ids)
    kept, seen = [], set()
    for i in sorted(range(len(doc_ids)), key=lambda i: -scores[i]):
        if doc_ids[i] not in seen:
            seen.add(doc_ids[i])
            kept.append(i)
        if len(kept) == depth:
            break
    return [RunRow(qid, stances[i], doc_ids[i], rank, score, tag)
            for rank, (i, score) in enumerate(zip(kept, falling_scores([scores[i] for i in kept])), start=1)]


def falling_scores(scores: list[float]) -> list[float]:
    """Scores given best first, at the printed precision and strictly decreasing there: a tie (the tail below the
    rerank depth shares one fused score) or a rise is stepped down by the last printed digit."""
    falling, previous, step = [], math.inf, 10 ** -SCORE_DECIMALS
    for score in scores:
        previous = min(round(float(score), SCORE_DECIMALS), round(previous - step, SCORE_DECIMALS))
        falling.append(previous)
    return falling


def format_row(row: RunRow) -> str:
    return f"{row.qid} {row.stance} {row.doc_id} {row.rank} {row.score:.{SCORE_DECIMALS}f} {row.tag}\n"


EMPTY_RUN = "the run is empty: no topic retrieved any document"


def write_run(rows: list[RunRow], output_dir: Path, overwrite: bool = False) -> Path:
    """Write `run.txt` via a temporary file and a rename: readers never see a partial run."""
    if not rows:
        raise ToucheError(EMPTY_RUN)
    check_tag(rows[0].tag)
    prepare_output(output_dir, RUN_FILES, overwrite, probe_bytes=0)  # the run's own write says a full disk
    target = output_dir / RUN_FILE
    try:
        # A killed run's temporaries go first; without --overwrite, a run.txt another run put there meanwhile stays.
        with atomic_file(target, _TEMPORARY_PREFIX, output=True, overwrite=overwrite) as out:
            out.writelines(format_row(row) for row in rows)
    except FileExistsError:  # another run put its run.txt there while this one worked
        raise ToucheError(f"{target} exists; pass --overwrite to replace it") from None
    except OSError as error:  # a full disk, a mount gone read-only mid-run: atomic_file left no partial file
        raise ToucheError(f"cannot write {RUN_FILE} to {output_dir}: {os_reason(error)}") from None
    # Replaced (prepare_output let it pass only with --overwrite): TIRA rejects a run.txt beside a run.txt.gz.
    discard_output(output_dir / (RUN_FILE + ".gz"))
    if overwrite:  # an old ir-metadata.yml describes another run: the new one follows once the run is tracked to
        discard_output(output_dir / METADATA_FILE)  # its end, and a kill in between left the old one
    return target


def check_tag(tag: str) -> None:
    """A run tag is the run line's last column: one word a run file can hold, as its ids are (`record_id`; checked
    before a run's work, and again at the write)."""
    if record_id(tag) != tag or any(unicodedata.category(char) == "Cf" for char in tag):  # a right-to-left override
        raise ToucheError(f"run tag {tag!r} must be one word without spaces, control or invisible characters")


class Problems(list):
    """Problems of one kind, the first MAX_LISTED of them listed and the rest counted (`more`): a run of a million
    bad lines must not become a million messages in memory."""

    def __init__(self):
        super().__init__()
        self.more = 0

    def append(self, problem: str) -> None:
        if len(self) < MAX_LISTED:
            super().append(problem)
        else:
            self.more += 1

    @property
    def count(self) -> int:
        return len(self) + self.more


@dataclass
class Validation:
    """What `touche validate` found: errors make a run invalid (TIRA's, Touché's and trec_eval's rules); warnings
    are this tool's own (ties, scientific notation), which TIRA accepts silently."""

    path: Path | None = None
    errors: Problems = field(default_factory=Problems)
    warnings: Problems = field(default_factory=Problems)
    topics: int = 0
    lines: int = 0
    rejected: Counter = field(default_factory=Counter)  # per topic, its lines rejected (no rank or score read)
    short: dict[str, str] = field(default_factory=dict)  # TIRA's size checks failed ("lines", "topics"): errors
    widths: Counter = field(default_factory=Counter)  # lines by their number of columns

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def kind(self) -> str:
        """What a file of no run line seems to be instead ('' where it has one): a qrels file or a corpus passed by
        mistake was a thousand column errors and no word of why."""
        if not self.widths or self.widths[6]:
            return ""
        if set(self.widths) == {4}:
            return "every line has 4 columns, as TREC qrels have; a run has 6"
        return "no line has the 6 columns of a run"

    def unforeseen(self, foreseen: dict[str, str]) -> list[str]:
        """The errors, less the size checks that `foreseen_problems` already announced before the work."""
        announced = {self.short.get(check) for check in foreseen}
        return [problem for problem in self.errors if problem not in announced]


def locate_run(path: Path) -> Path:
    """A run file, or the one run file (run.txt or run.txt.gz) of an output directory; else a ToucheError. As TIRA
    counts them, whatever is there under either name counts (a directory too)."""
    if not path.is_dir():
        try:
            path.stat()
        except OSError as error:  # missing, a link loop, a folder this user may not search
            raise ToucheError(f"{path}: {os_reason(error)}") from None
        return path  # a file, or a pipe read as one (`touche validate <(zcat run.gz)`)
    try:
        found = [path / name for name in RUN_FILES if _named(path / name)]
    except OSError as error:  # a folder this user may not search: "found 0", where the run may be
        raise ToucheError(f"{path}: {os_reason(error)}") from None
    if len(found) != 1:
        raise ToucheError(f"{path}: expected exactly one of run.txt / run.txt.gz, found {len(found)}")
    if problem := not_a_file(found[0]):  # a FIFO held `touche validate DIR` for ever; a pipe named itself is read
        raise ToucheError(f"{found[0]}: {problem}")
    return found[0]


def _named(path: Path) -> bool:
    """Whether something is there under the name, a link leading nowhere too; an OSError where none can tell."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def read_problem(error: Exception) -> str:
    """Why a run could not be read, in a few words: the system's reason (permission denied), else the gzip's."""
    if isinstance(error, OSError) and error.errno is not None:
        return os_reason(error)
    return str(error) or "the gzip file ends too soon"  # an EOFError: a gzip cut short


class _Bounded(io.RawIOBase):
    """A binary stream read up to `_most_read` bytes: past them a ToucheError, so that a run of gigabytes (a few MB
    gzipped) is refused instead of filling the memory."""

    def __init__(self, raw, path: Path):
        super().__init__()
        self.raw, self.path, self.count = raw, path, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = self.raw.readinto(buffer)
        self.count += size
        if self.count > _most_read(self.path):
            raise ToucheError(f"{self.path}: the run is larger than {_size_limit(self.path)}")
        return size

    def close(self) -> None:
        self.raw.close()
        super().close()


def _most_read(path: Path) -> int:
    """The most read of a run: TIRA's limit of a file as stored, UNPACKED_FACTOR times it unpacked for a .gz."""
    return MAX_BYTES * (UNPACKED_FACTOR if path.suffix == ".gz" else 1)


def _size_limit(path: Path) -> str:
    """`_most_read` in words."""
    if path.suffix == ".gz":
        return f"{_most_read(path) // 2**20} MB unpacked, the most this reads"
    return f"{MAX_BYTES // 2**20} MB, TIRA's limit"


def open_run(path: Path) -> TextIO:
    """A run file's text, read through gzip where its name ends in .gz, up to `_most_read` (then a ToucheError)."""
    return io.TextIOWrapper(io.BufferedReader(_Bounded(open_packed(path), path)), encoding="utf-8")


def _run_path(path: Path, result: Validation) -> Path | None:
    try:
        return locate_run(path)
    except ToucheError as error:
        result.errors.append(str(error))
        return None


def validate_run(path: Path, task: str | None = None) -> Validation:
    """TIRA's check_format for run.txt plus Touché's rules on stance labels, ranks, score order and tag."""
    result = Validation()
    run_path = _run_path(path, result)
    if run_path is None:
        return result
    result.path = run_path
    if run_path.name in RUN_FILES:  # given as a file: TIRA checks its directory
        other = run_path.with_name(RUN_FILES[1] if run_path.name == RUN_FILES[0] else RUN_FILES[0])
        if other.exists():
            result.errors.append(f"{other} lies beside it: TIRA rejects an output holding both")
    if run_path.is_file() and run_path.stat().st_size > MAX_BYTES:  # as TIRA measures it: packed, for a .gz
        result.errors.append(f"file is larger than {MAX_BYTES // 2**20} MB, TIRA's limit")
        return result
    by_topic: dict[str, list[tuple[int, float, str, int]]] = defaultdict(list)
    tags, stances = set(), set()
    try:
        with open_run(run_path) as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():  # TIRA's check_format reads it as a line of 1 column and rejects the run
                    result.errors.append(f"line {number}: empty (TIRA rejects a run with an empty line)")
                    continue
                result.lines += 1
                _check_line(line, number, result, by_topic, tags, stances)
    except UnicodeDecodeError as error:
        result.errors.append(f"cannot read the run: {not_utf8(error, run_path)}")
        return result
    except (OSError, EOFError, zlib.error) as error:  # EOFError: a gzip cut short
        result.errors.append(f"cannot read the run: {read_problem(error)}")
        return result
    except ToucheError:  # read no further
        result.errors.append(f"file is larger than {_size_limit(run_path)}")
        return result
    result.topics = len(by_topic)
    _check_run(result, by_topic, tags, stances, task)
    return result


def other_space(line: str) -> str | None:
    """The first whitespace between or before a run line's columns (opening it: another topic then) that TIRA's check
    splits at and trec_eval reads as part of a column; one after the last column changes no column trec_eval reads
    (a line of such whitespace alone: its first)."""
    space = _OTHER_SPACE.search(line.rstrip() or line)
    return space[0] if space else None


def _check_line(line, number, result, by_topic, tags, stances) -> None:
    columns = line.split()
    result.widths[len(columns)] += 1
    if len(columns) != 6:
        result.errors.append(f"line {number}: expected 6 columns, found {len(columns)}")
        result.rejected.update(columns[:1])
        return
    qid, stance, doc_id, rank_text, score_text, tag = columns
    # Python's int() and float() also take "1_0" and other scripts' digits, which trec_eval reads otherwise.
    if not _INTEGER.match(rank_text):
        kind = "too long an integer for trec_eval" if INTEGER.fullmatch(rank_text) else "not an integer"
        result.errors.append(f"line {number}: rank {rank_text!r} is {kind}")
        result.rejected[qid] += 1
        return
    rank = int(rank_text)
    try:
        score = float(score_text)
    except ValueError:
        score = None
    if score is None or (math.isfinite(score) and not DECIMAL.fullmatch(score_text)):
        result.errors.append(f"line {number}: score {score_text!r} is not a number")
        result.rejected[qid] += 1
        return
    if not math.isfinite(score):
        result.errors.append(f"line {number}: score {score_text!r} is not finite")
    if "e" in score_text.lower():
        result.warnings.append(f"line {number}: score {score_text} is in scientific notation")
    if qid.startswith("\ufeff"):  # an editor's byte order mark: trec_eval reads it as part of the topic
        result.warnings.append(f"line {number}: a byte order mark (U+FEFF) before topic {qid[1:]!r} makes it "
                               "another topic")
    if space := other_space(line):
        result.warnings.append(f"line {number}: U+{ord(space):04X} between or before columns, which trec_eval "
                               "reads as part of a column")
    if not _SAFE_ID.match(doc_id) or not _SAFE_ID.match(qid.removeprefix("\ufeff")):
        result.warnings.append(f"line {number}: special characters in an id")
    tags.add(tag)
    stances.add(stance)
    # A byte order mark's line ranks in its topic: the mark is said above, not as a gap there (TIRA accepts it); its
    # document stays another topic's, as trec_eval reads it, so the topic's own line of it is no duplicate.
    marked = "\ufeff" if qid.startswith("\ufeff") else ""
    by_topic[qid.removeprefix("\ufeff")].append((rank, score, marked + doc_id, number))


def foreseen_problems(topics: int, per_topic: int) -> dict[str, str]:
    """What TIRA's size checks ("lines", "topics", as `Validation.short` names them) will reject in a run of
    `topics` topics with at most `per_topic` documents each, known before any work."""
    problems = {}
    if topics * per_topic < MIN_LINES:
        problems["lines"] = (f"{counted(topics, 'topic')} of at most {counted(per_topic, 'document')} each: at most "
                             f"{counted(topics * per_topic, 'line')}; at least {MIN_LINES} are required")
    if topics < MIN_TOPICS:
        problems["topics"] = f"the input has {counted(topics, 'topic')}; at least {MIN_TOPICS} are required"
    return problems


def candidate_problems(found: list[int], depth: int) -> dict[str, str]:
    """What TIRA's size checks will reject in a run whose topics found `found` candidates each (at most `depth` of
    them ranked), known once the first stage is done, before the models load."""
    served = [min(count, depth) for count in found if count]
    problems = {}
    if sum(served) < MIN_LINES:
        problems["lines"] = (f"the candidates give at most {counted(sum(served), 'line')}; at least {MIN_LINES} are "
                             f"required")
    if len(served) < MIN_TOPICS:
        problems["topics"] = (f"{len(served)} of {counted(len(found), 'topic')} found candidates; at least "
                              f"{MIN_TOPICS} are required")
    return problems


def _check_run(result, by_topic, tags, stances, task) -> None:
    if result.lines < MIN_LINES:
        result.short["lines"] = f"the run has {counted(result.lines, 'line')}; at least {MIN_LINES} are required"
    if len(by_topic) < MIN_TOPICS:
        result.short["topics"] = f"the run has {counted(len(by_topic), 'topic')}; at least {MIN_TOPICS} are required"
    for problem in result.short.values():
        result.errors.append(problem)
    if len(tags) > 1:
        result.errors.append(f"the run has {len(tags)} tags ({', '.join(sorted(tags))}); exactly one is allowed")
    labels = stances - NO_STANCE
    allowed = [STANCE_LABELS[task]] if task else list(STANCE_LABELS.values())
    if labels and not any(labels <= choice for choice in allowed):
        whose = f"the {task} task's" if task else "one task's set"
        result.errors.append(f"stance labels {', '.join(sorted(labels))} are not {whose} "
                             f"({' | '.join(', '.join(sorted(choice)) for choice in allowed)}, or Q0)")
    for qid, entries in by_topic.items():
        docs = [doc for _, _, doc, _ in entries]
        if len(docs) != len(set(docs)):
            result.errors.append(f"topic {qid}: a document appears more than once")
        if len(entries) > 1000:
            result.errors.append(f"topic {qid}: {len(entries)} documents; at most 1000 are allowed")
        ranked = sorted(entries)
        # Distinct and within 1..n, n counting the topic's rejected lines: the gaps they leave are said once, by
        # their own errors, and no other.
        ranks, total = [rank for rank, *_ in ranked], len(ranked) + result.rejected[qid]
        if len(set(ranks)) != len(ranks) or not all(1 <= rank <= total for rank in ranks):
            result.errors.append(f"topic {qid}: ranks are not 1..{total} without gaps")
        tied = False
        for (rank_a, score_a, _, _), (rank_b, score_b, _, line) in zip(ranked, ranked[1:]):
            if rank_b == rank_a:  # a rank given twice: said above, and its scores have no order to keep
                continue
            if score_b > score_a:
                result.errors.append(f"topic {qid}: score rises from rank {rank_a} to {rank_b} (line {line})")
                break
            if score_b == score_a and not tied:  # said once a topic; a rise further down is still an error
                result.warnings.append(f"topic {qid}: tied scores at ranks {rank_a} and {rank_b}")
                tied = True
