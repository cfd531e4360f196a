"""Find and stream the corpus in an input directory: args.me JSON, passages/documents JSONL, or a re-rank file.

Readers are generators, so a 1.6 GB args.me file or a 938 MB passage file is never held as one JSON value.
Unusable records (duplicate ids, empty text, broken lines) are skipped and reported once with their count.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import ijson

from .errors import ToucheError
from .records import Candidate, Document

log = logging.getLogger(__name__)

ARGSME_FILES = ("args-me.json", "debateorg.json", "debatepedia.json", "debatewise.json", "idebate.json",
                "parliamentary.json")


@dataclass(frozen=True)
class CorpusSource:
    """Where the documents are: `kind` is argsme, jsonl or rerank; `id_field`/`text_field` name the JSONL keys."""

    kind: str
    paths: tuple[Path, ...]
    id_field: str = "id"
    text_field: str = "contents"

    @property
    def name(self) -> str:
        return ", ".join(path.name for path in self.paths)


def _first_existing(input_dir: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz"):
        if (input_dir / name).is_file():
            return input_dir / name
    return None


def detect_corpus(input_dir: Path) -> CorpusSource | None:
    """The corpus in `input_dir`, by file name; None when there is none (e.g. a ChatNoir input)."""
    rerank = _first_existing(input_dir, "rerank.jsonl")
    if rerank:
        return CorpusSource("rerank", (rerank,), "docno", "text")
    if (input_dir / "args-me.json").is_file():
        return CorpusSource("argsme", (input_dir / "args-me.json",))
    portals = tuple(input_dir / name for name in ARGSME_FILES[1:] if (input_dir / name).is_file())
    if portals:
        return CorpusSource("argsme", portals)
    passages = _first_existing(input_dir, "passages.jsonl")
    if passages:
        return CorpusSource("jsonl", (passages,), "id", "contents")
    documents = _first_existing(input_dir, "documents.jsonl")
    if documents:
        return CorpusSource("jsonl", (documents,), "docno", "text")
    return None


def _open(path: Path, mode: str = "rt"):
    if path.suffix == ".gz":
        return gzip.open(path, mode, encoding="utf-8") if "t" in mode else gzip.open(path, mode)
    return path.open(mode, encoding="utf-8") if "t" in mode else path.open(mode)


class _Skips:
    """Counts skipped records by reason and warns once at the end."""

    def __init__(self, source: str):
        self.source, self.reasons = source, Counter()

    def add(self, reason: str) -> None:
        self.reasons[reason] += 1

    def report(self) -> None:
        if self.reasons:
            details = ", ".join(f"{count} {reason}" for reason, count in sorted(self.reasons.items()))
            log.warning("%s: skipped %d records (%s)", self.source, sum(self.reasons.values()), details)


def read_documents(source: CorpusSource) -> Iterator[Document]:
    """Stream the unique, non-empty documents of an args.me or JSONL corpus."""
    skips, seen = _Skips(source.name), set()
    records = _argsme_documents(source, skips) if source.kind == "argsme" else _jsonl_documents(source, skips)
    count = 0
    for document in records:
        if not document.text.strip():
            skips.add("empty texts")
        elif document.doc_id in seen:
            skips.add("duplicate ids")
        else:
            seen.add(document.doc_id)
            count += 1
            yield document
    skips.report()
    if count == 0:
        raise ToucheError(f"{source.name}: no usable documents")


def _jsonl_documents(source: CorpusSource, skips: _Skips) -> Iterator[Document]:
    for path in source.paths:
        with _open(path) as lines:
            for line in lines:
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    doc_id, text = record[source.id_field], record[source.text_field]
                except (json.JSONDecodeError, KeyError, TypeError):
                    skips.add("bad lines")
                    continue
                if not isinstance(doc_id, (str, int)) or not isinstance(text, str) or not str(doc_id).strip():
                    skips.add("bad lines")
                    continue
                yield Document(str(doc_id).strip(), text)


def _argsme_documents(source: CorpusSource, skips: _Skips) -> Iterator[Document]:
    """args.me arguments as conclusion + premises, keeping the first premise's stance (PRO/CON)."""
    for path in source.paths:
        try:
            with _open(path, "rb") as stream:
                for argument in ijson.items(stream, "arguments.item"):
                    document = _argument_document(argument)
                    if document is None:
                        skips.add("malformed arguments")
                    else:
                        yield document
        except ijson.JSONError as error:
            raise ToucheError(f"{path}: not an args.me JSON file ({error})") from None


def _argument_document(argument) -> Document | None:
    if not isinstance(argument, dict) or not isinstance(argument.get("id"), str):
        return None
    premises = [premise for premise in argument.get("premises") or [] if isinstance(premise, dict)]
    parts = [argument.get("conclusion") or ""] + [premise.get("text") or "" for premise in premises]
    text = " ".join(part.strip() for part in parts if isinstance(part, str) and part.strip())
    stance = premises[0].get("stance") if premises else None
    return Document(argument["id"], text, stance if stance in ("PRO", "CON") else None)


def read_rerank(source: CorpusSource) -> tuple[dict[str, str], dict[str, list[Candidate]]]:
    """A TIREx re-rank file: the queries it names and each query's candidates in file order."""
    skips, queries, candidates = _Skips(source.name), {}, {}
    seen: set[tuple[str, str]] = set()
    with _open(source.paths[0]) as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                qid, doc_id, text = str(record["qid"]), str(record["docno"]), record["text"]
            except (json.JSONDecodeError, KeyError, TypeError):
                skips.add("bad lines")
                continue
            if not isinstance(text, str) or not text.strip():
                skips.add("empty texts")
                continue
            if (qid, doc_id) in seen:
                skips.add("duplicate ids")
                continue
            seen.add((qid, doc_id))
            queries.setdefault(qid, str(record.get("query") or ""))
            score = record.get("score")
            score = float(score) if isinstance(score, (int, float)) else -float(len(candidates.get(qid, ())))
            candidates.setdefault(qid, []).append(Candidate(qid, Document(doc_id, text), score))
    skips.report()
    if not candidates:
        raise ToucheError(f"{source.name}: no usable candidates")
    return queries, candidates
