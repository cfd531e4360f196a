"""Find and stream the corpus in an input directory: args.me JSON, passages/documents JSONL, or a re-rank file.

Readers are generators, so a 1.6 GB args.me file or a 938 MB passage file is never held as one JSON value.
Unusable records (duplicate ids, empty text, broken lines) are skipped and reported once with their count.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import logging
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import ijson

from .errors import ToucheError
from .records import Candidate, Document, bounded_text, record_id

log = logging.getLogger(__name__)

_CHUNK_BYTES = 1 << 20
_ENCODED_FFFD = "\ufffd".encode("utf-8")
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


class Defects:
    """Counts what a read skipped (by reason) and repaired, and warns once at the end."""

    def __init__(self, source: str):
        self.source, self.reasons, self.replaced_bytes = source, Counter(), 0

    def add(self, reason: str) -> None:
        self.reasons[reason] += 1

    def report(self) -> None:
        problems = []
        if self.reasons:
            details = ", ".join(f"{count} {reason}" for reason, count in sorted(self.reasons.items()))
            problems.append(f"skipped {sum(self.reasons.values())} records ({details})")
        if self.replaced_bytes:
            problems.append(f"replaced {self.replaced_bytes} undecodable bytes with U+FFFD")
        if problems:
            log.warning("%s: %s", self.source, "; ".join(problems))


class _Utf8Reader(io.RawIOBase):
    """A corpus file's bytes (gzip or plain) as valid UTF-8: the one place where corpus bytes become text.

    Undecodable bytes become U+FFFD and are counted, so one Latin-1 byte among 868k passages costs one character,
    not the run. A truncated or corrupt gzip stream is a ToucheError naming the file: a partial corpus must not
    silently give a different run.
    """

    def __init__(self, path: Path, defects: Defects):
        super().__init__()
        self.path, self.defects = path, defects
        self._raw = gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending, self._offset, self._tail, self._done = b"", 0, b"", False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._offset == len(self._pending) and not self._done:
            chunk = self._read_raw()
            self._done = not chunk
            text = self._decoder.decode(chunk, final=self._done)
            # A U+FFFD the file itself holds (EF BF BD, maybe split across chunks) is not a repair.
            self.defects.replaced_bytes += text.count("\ufffd") - (self._tail + chunk).count(_ENCODED_FFFD)
            self._tail = (self._tail + chunk)[-2:]
            self._pending, self._offset = text.encode("utf-8"), 0
        size = min(len(buffer), len(self._pending) - self._offset)
        buffer[:size] = self._pending[self._offset:self._offset + size]
        self._offset += size
        return size

    def _read_raw(self) -> bytes:
        try:
            return self._raw.read(_CHUNK_BYTES)
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            raise ToucheError(f"{self.path}: truncated or corrupt gzip file ({error})") from None
        except OSError as error:
            raise ToucheError(f"cannot read {self.path}: {error.strerror or error}") from None

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_text(path: Path, defects: Defects) -> io.BufferedReader:
    """A binary stream of valid UTF-8 over a corpus file: iterate it for lines, or hand it to ijson."""
    return io.BufferedReader(_Utf8Reader(path, defects), _CHUNK_BYTES)


def json_lines(path: Path, defects: Defects) -> Iterator[tuple[int, object | None]]:
    """(line number, parsed value) of each non-blank line of a JSONL file read by `open_text`; None for a line
    that is not JSON (each reader decides whether that is skipped, counted or an error)."""
    with open_text(path, defects) as lines:  # json.loads reads bytes, a BOM included
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            yield number, record


def read_documents(source: CorpusSource, report: bool = True) -> Iterator[Document]:
    """Stream the unique, non-empty documents of an args.me or JSONL corpus.

    `report=False` keeps a second pass over the same file from warning about its defects again.
    """
    defects, seen = Defects(source.name), set()
    records = _argsme_documents(source, defects) if source.kind == "argsme" else _jsonl_documents(source, defects)
    count = 0
    for document in records:
        if not document.text.strip():
            defects.add("empty texts")
        elif document.doc_id in seen:
            defects.add("duplicate ids")
        else:
            seen.add(document.doc_id)
            count += 1
            yield document
    if report:
        defects.report()
    if count == 0:
        raise ToucheError(f"{source.name}: no usable documents")


def _jsonl_documents(source: CorpusSource, defects: Defects) -> Iterator[Document]:
    for path in source.paths:
        for _, record in json_lines(path, defects):
            try:
                doc_id, text = record_id(record[source.id_field]), record[source.text_field]
            except (KeyError, TypeError):  # not an object (None: not JSON), or a field missing
                defects.add("bad lines")
                continue
            if doc_id is None or not isinstance(text, str):
                defects.add("bad lines")
                continue
            yield Document(doc_id, bounded_text(text))


def _argsme_documents(source: CorpusSource, defects: Defects) -> Iterator[Document]:
    """args.me arguments as conclusion + premises, keeping the first premise's stance (PRO/CON)."""
    for path in source.paths:
        try:
            with open_text(path, defects) as stream:
                for argument in ijson.items(stream, "arguments.item"):
                    document = _argument_document(argument)
                    if document is None:
                        defects.add("malformed arguments")
                    else:
                        yield document
        except ijson.JSONError as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ToucheError(f"{path}: truncated, or not an args.me JSON file ({reason})") from None


def _argument_document(argument) -> Document | None:
    if not isinstance(argument, dict) or not isinstance(argument.get("id"), str):
        return None
    premises = [premise for premise in argument.get("premises") or [] if isinstance(premise, dict)]
    parts = [argument.get("conclusion") or ""] + [premise.get("text") or "" for premise in premises]
    text = " ".join(part.strip() for part in parts if isinstance(part, str) and part.strip())
    stance = premises[0].get("stance") if premises else None
    doc_id = record_id(argument["id"])
    return None if doc_id is None else Document(doc_id, bounded_text(text), stance if stance in ("PRO", "CON") else None)


def read_rerank(source: CorpusSource) -> dict[str, list[Candidate]]:
    """A TIREx re-rank file: each query's candidates in file order (app/topics.py reads its queries)."""
    defects, candidates = Defects(source.name), {}
    seen: set[tuple[str, str]] = set()
    for _, record in json_lines(source.paths[0], defects):
        try:
            qid, doc_id, text = record_id(record["qid"]), record_id(record["docno"]), record["text"]
        except (KeyError, TypeError):  # not an object (None: not JSON), or a field missing
            defects.add("bad lines")
            continue
        if qid is None or doc_id is None or not isinstance(text, str):
            defects.add("bad lines")
            continue
        if not text.strip():
            defects.add("empty texts")
            continue
        if (qid, doc_id) in seen:
            defects.add("duplicate ids")
            continue
        seen.add((qid, doc_id))
        score = record.get("score")
        score = float(score) if isinstance(score, (int, float)) else -float(len(candidates.get(qid, ())))
        candidates.setdefault(qid, []).append(Candidate(qid, Document(doc_id, bounded_text(text)), score))
    defects.report()
    if not candidates:
        raise ToucheError(f"{source.name}: no usable candidates")
    return candidates
