"""What the training scripts share: the Touché 2022 Task 2 dev data, topic folds, judged-only nDCG, the CLI.

The dev data is read with the product's own readers (app.corpus, app.topics, app.evaluate), so training sees
the passages, topics and labels exactly as a run does.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import ir_measures
import numpy as np

from app.corpus import detect_corpus, read_documents
from app.errors import ToucheError, listed
from app.evaluate import read_qrels, read_stance_qrels
from app.files import not_utf8, open_packed
from app.logs import log_to_stderr
from app.records import COMPARATIVE_LABELS, Topic
from app.settings import DATA_DIR, MODELS_DIR
from app.topics import read_topics

DEFAULT_DATA_DIR = DATA_DIR
DEFAULT_OUT_DIR = MODELS_DIR
TASK = "touche-2022-task2"
# The files under the data folder that the readers below open (docs/DATA.md: where each comes from). Each training
# module's DATA_FILES lists what it reads, from these and its own; `require_data` checks them before any work.
DEV_PASSAGES = (f"{TASK}/tira-input/passages.jsonl.gz",)
DEV_TOPIC_NUMBERS = f"{TASK}/dev-topics.txt"
DEV_TOPICS = (f"{TASK}/tira-input/topics.xml", DEV_TOPIC_NUMBERS)
DEV_QRELS = (f"{TASK}/touche-task2-2022-relevance-dev.qrels", f"{TASK}/touche-task2-2022-quality-dev.qrels")
DEV_STANCES = (f"{TASK}/touche-task2-2022-stance-dev.qrels",)
# The shipped heads were trained on embeddings encoded like this; fixing it (padding, and so the last bits, depend on
# the batch size) makes a retrain byte-identical on any CPU. Runs may encode in bf16 (app.encoder.resolve_precision),
# within cosine 0.99995 of these.
ENCODING = {"precision": "fp32", "batch_size": 32}


def require_data(data_dir: Path, files: Sequence[str], command: str, flag: str = "--data DIR") -> None:
    """One line before any work when the data folder lacks a file `command` reads (`files`: paths or glob
    patterns under it), naming the first one missing, how `command` is given the folder (`flag`) and docs/DATA.md."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise ToucheError(f"{command}: no data folder {data_dir}; pass {flag} holding the files docs/DATA.md lists")
    missing = [name for name in files if next(data_dir.glob(name), None) is None]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ToucheError(f"{command}: {data_dir / missing[0]} is missing{more}; pass {flag} holding the files "
                          "docs/DATA.md lists")


@contextmanager
def reading(path: Path) -> Iterator:
    """A data file opened as UTF-8 text (through gzip where its name ends in .gz; a byte order mark skipped, which
    made the first column another's) for the block that reads it. A file unlike the one docs/DATA.md names (cut,
    not gzip, not UTF-8, a column or key missing, a value of another kind) is one line naming it, where it would be
    an internal error of the parser or of the block."""
    path = Path(path)
    try:
        with open_packed(path, "rt", encoding="utf-8-sig", newline="") as handle:
            yield handle
    except KeyError as error:
        raise ToucheError(f"cannot read {path}: it lacks the column or key {error}; docs/DATA.md says what it "
                          "holds") from error
    except UnicodeDecodeError as error:  # a UnicodeDecodeError is a ValueError: said in words first
        raise ToucheError(f"cannot read {path}: {not_utf8(error, path)}; docs/DATA.md says what it holds") from error
    except (ValueError, TypeError, IndexError, EOFError, SyntaxError, csv.Error, zlib.error,
            gzip.BadGzipFile) as error:  # SyntaxError: a literal that ast.literal_eval cannot read
        reason = " ".join(str(error).split()) or type(error).__name__
        raise ToucheError(f"cannot read {path}: {reason}; docs/DATA.md says what it holds") from error


def csv_rows(handle, columns: Sequence[str], allowed: dict[str, Sequence[str]] | None = None,
             **options) -> Iterator[dict[str, str]]:
    """The rows of a CSV / TSV file open in a `reading` block, as csv.DictReader reads them with `options`. A
    header without one of `columns`, a row with fewer fields than the header (a file cut in the middle), or a value
    outside its column's `allowed` ones is an error of the block, naming the line, where it would give None or an
    odd label to the code that reads the row; so is a file of no rows, or one where an `allowed` value never comes
    (a head learns nothing from one class: the learner's error named no file)."""
    reader = csv.DictReader(handle, **options)
    for column in columns:
        if column not in (reader.fieldnames or ()):
            raise KeyError(column)
    seen, rows = {column: set() for column in allowed or {}}, 0
    for rows, row in enumerate(reader, 1):
        if None in row.values():
            raise ValueError(f"line {reader.line_num} has fewer fields than the header (is the file cut short?)")
        for column, values in (allowed or {}).items():
            if row[column] not in values:
                raise ValueError(f"line {reader.line_num}: {column} is {row[column]!r}, not one of "
                                 f"{', '.join(values)}")
            seen[column].add(row[column])
        yield row
    if not rows:
        raise ValueError("no rows under the header (is the file cut short?)")
    for column, values in (allowed or {}).items():
        if missing := [value for value in values if value not in seen[column]]:
            raise ValueError(f"no row has {column} {missing[0]!r} (is the file cut short?)")


def read_passages(data_dir: Path) -> dict[str, str]:
    """{doc_id: text} of the tira-input passages, in file order."""
    corpus = Path(data_dir) / TASK / "tira-input"
    return {document.doc_id: document.text for document in read_documents(detect_corpus(corpus))}


def dev_topic_numbers(data_dir: Path) -> list[str]:
    """The dev topics' numbers, in numeric order; none is an error (the training divided by their number)."""
    with reading(Path(data_dir) / TASK / "dev-topics.txt") as handle:
        if not (numbers := sorted(set(handle.read().replace(",", " ").split()), key=int)):
            raise ValueError("it names no topic")
        return numbers


def read_dev_topics(data_dir: Path) -> list[Topic]:
    """The dev topics of tira-input/topics.xml, in file order; none of them there is an error."""
    dev = set(dev_topic_numbers(data_dir))
    path = Path(data_dir) / TASK / "tira-input" / "topics.xml"
    if not (topics := [t for t in read_topics(path) if t.number in dev]):
        raise ToucheError(f"{Path(data_dir) / TASK / 'dev-topics.txt'} names none of the topics of {path}")
    return topics


def read_dev_qrels(data_dir: Path, name: str) -> dict[tuple[str, str], int]:
    """{(qid, doc_id): grade} of the `name` (relevance or quality) dev qrels, negative grades as 0."""
    path = Path(data_dir) / TASK / f"touche-task2-2022-{name}-dev.qrels"
    return judging_dev_topics(data_dir, path, {(qrel.query_id, qrel.doc_id): qrel.relevance
                                               for qrel in read_qrels(path)})


def read_dev_stances(data_dir: Path) -> dict[tuple[str, str], str]:
    """{(qid, doc_id): stance label} of the dev stance qrels, in file order; a label of no comparative stance
    (`First`) is an error naming it, before the training (it was a traceback once the side model had trained)."""
    path = Path(data_dir) / TASK / "touche-task2-2022-stance-dev.qrels"
    judged = judging_dev_topics(data_dir, path, read_stance_qrels(path))
    stray = next(((key, label) for key, label in judged.items() if label not in COMPARATIVE_LABELS), None)
    if stray is not None:
        (qid, doc_id), label = stray
        raise ToucheError(f"{path}: topic {qid}, document {doc_id} is judged {label!r}, no comparative stance label "
                          f"({', '.join(COMPARATIVE_LABELS)})")
    return judged


def judging_dev_topics(data_dir: Path, path: Path, judged: dict) -> dict:
    """`judged`, where it judges a dev topic; else an error before the training (an empty file or qrels of other
    topics trained heads of NaN weights, exit 0, and every run on them scored NaN)."""
    dev = dev_topic_numbers(data_dir)
    if not set(dev) & {qid for qid, _ in judged}:
        raise ToucheError(f"{path} judges none of the dev topics ({listed(dev)}): empty, or qrels of other topics?")
    return judged


def topic_folds(qids: list[str], k: int, seed: int) -> list[set[str]]:
    """Whole topics dealt into k folds in a seeded random order."""
    topics = sorted(set(qids), key=int)
    order = np.random.default_rng(seed).permutation(len(topics))
    return [{topics[i] for i in order[f::k]} for f in range(k)]


def judged_ndcg(scores: np.ndarray, gains: np.ndarray, ideal: float, k: int = 5) -> np.ndarray:
    """Judged-only nDCG@k of each row of `scores` (combinations x judged documents) with linear `gains`.

    Equals ir_measures' nDCG(judged_only=True)@k when `ideal` is the DCG@k of the topic's best qrels ordering
    (ties keep the column order; trec_eval breaks them by doc id, descending).
    """
    if ideal <= 0:
        return np.zeros(len(scores))
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    discount = 1.0 / np.log2(np.arange(2, top.shape[1] + 2))
    return (gains[top] * discount).sum(axis=1) / ideal


def ideal_dcg(grades, k: int = 5) -> float:
    best = np.sort(np.asarray(list(grades), dtype=np.float64))[::-1][:k]
    return float((best / np.log2(np.arange(2, len(best) + 2))).sum())


def per_topic_ndcg(qids: Sequence[str], doc_ids: Sequence[str], grades: Sequence[float], scores: np.ndarray,
                   k: int = 5) -> dict[str, float]:
    """Judged-only nDCG@k per topic of ranking its judged documents by `scores`, the ideal from those documents:
    ir_measures' nDCG(judged_only=True)@k, as `touche evaluate` scores a run (ties broken by doc id)."""
    qrels = [ir_measures.Qrel(qid, doc_id, int(grade)) for qid, doc_id, grade in zip(qids, doc_ids, grades)]
    run = [ir_measures.ScoredDoc(qid, doc_id, float(score)) for qid, doc_id, score in zip(qids, doc_ids, scores)]
    return {result.query_id: result.value for result in (ir_measures.nDCG(judged_only=True) @ k).iter_calc(qrels, run)}


def mean_ndcg(qids: Sequence[str], doc_ids: Sequence[str], grades: Sequence[float], scores: np.ndarray,
              k: int = 5) -> float:
    """Mean over topics of per_topic_ndcg."""
    return float(np.mean(list(per_topic_ndcg(qids, doc_ids, grades, scores, k).values())))


def parser(doc: str, data_flag: str = "data_dir", out_dir: bool = True,
           cache_example: str | None = None) -> argparse.ArgumentParser:
    """The options the training scripts share: the data folder (positional, or `--data-dir` when `data_flag`
    says so), --out-dir, --seed and, for scripts that embed with MiniLM, --cache-dir."""
    result = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if data_flag.startswith("--"):
        result.add_argument(data_flag, dest="data_dir", type=Path, default=DEFAULT_DATA_DIR)
        result.data_flag = f"{data_flag} DIR"  # as `run` names it where the folder lacks a file
    else:
        result.add_argument("data_dir", nargs="?", type=Path, default=DEFAULT_DATA_DIR)
        result.data_flag = "DATA_DIR (the first argument)"
    if out_dir:
        result.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    result.add_argument("--seed", type=int, default=13)
    if cache_example:
        result.add_argument("--cache-dir", type=Path, default=None,
                            help=f"keep MiniLM embeddings here between runs (e.g. {cache_example})")
    return result


def run(main: Callable, parser: argparse.ArgumentParser, argv: list[str] | None = None):
    """Parse argv, log to stderr, and call main with the options as keywords; returns what main returns."""
    args = parser.parse_args(argv)
    log_to_stderr()
    module = sys.modules[main.__module__]  # `python -m` runs it as __main__; its spec keeps the real name
    try:
        require_data(args.data_dir, module.DATA_FILES, f"python -m {module.__spec__.name}", parser.data_flag)
    except ToucheError as error:
        parser.exit(1, f"error: {error}\n")
    return main(**vars(args))
