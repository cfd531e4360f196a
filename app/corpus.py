"""Find and stream the corpus in an input directory: args.me JSON, passages/documents JSONL, or a re-rank file.

Readers are generators, so a 1.6 GB args.me file or a 938 MB passage file is never held as one JSON value.
Unusable records (duplicate ids, empty text, broken lines, damaged args.me arguments) are skipped and reported
once with their count.
"""

from __future__ import annotations

import bisect
import codecs
import gzip
import heapq
import io
import itertools
import json
import logging
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import ijson
import numpy as np

from .errors import ToucheError, counted, listed
from .files import UTF32_MARKS, bom_encoding, given_file, not_a_file
from .records import (DECIMAL, Candidate, Document, bounded_text, query_id, record_id, record_score,
                      scores_or_order, visible, word_stems)

log = logging.getLogger(__name__)

_CHUNK_BYTES = 1 << 20
# args.me JSON nests about 6 levels. ijson keeps each level's path, so its memory grows with the square of the depth
# (20,000 levels: 1 GB; 100,000 in a 200 kB file: 24 GB and the OOM killer); 1,000 levels cost it 3 MB.
MAX_JSON_DEPTH = 1000
# Python's limit on an integer's digits (sys.get_int_max_str_digits' default); a longer run is read as 0 (JsonGuard).
MAX_DIGITS = 4300
# A JSONL line longer than this is no record: one line of gigabytes (a few MB gzipped) must not be read into memory
# whole. A document's stages read its first 100,000 characters anyway (`records.MAX_TEXT_CHARS`).
MAX_LINE_BYTES = 64 << 20
# Nor is a line of more brackets than this: each is a list or dict to json.loads, and 64 MB of them took 3.3 GB. A
# record has a few; a text's brackets count too, so a document of 15 MB with 100,000 of them is lost.
MAX_LINE_CONTAINERS = 100_000
_ENCODED_FFFD = "\ufffd".encode("utf-8")
# Other names --corpus reads as JSON lines (`records_source`), in any case.
_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
# Where an args.me argument starts: "{" and a key of an argument's own, which none of its premises or its context
# begins with (a key in a string has its quotes escaped).
ARGUMENT_START = re.compile(rb'\{\s*"(?:premises|context|id|conclusion)"\s*:')
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


# The corpus files an input directory may hold, in order of precedence (docs: README, "Which corpus a run ranks"):
# (kind, id field, text field, file names). A re-rank file comes first: it is the task's candidates, and a corpus
# beside it is their source. Of args.me, args-me.json holds the portal files' arguments. Within one entry the
# uncompressed file comes first (`gunzip -k` leaves both).
CORPUS_FILES = (
    ("rerank", "docno", "text", ("rerank.jsonl", "rerank.jsonl.gz")),
    ("argsme", "id", "contents", ARGSME_FILES[:1]),
    ("argsme", "id", "contents", ARGSME_FILES[1:]),
    ("jsonl", "id", "contents", ("passages.jsonl", "passages.jsonl.gz")),
    ("jsonl", "docno", "text", ("documents.jsonl", "documents.jsonl.gz")),
)
CORPUS_NAMES = tuple(name for *_, names in CORPUS_FILES for name in names)
# Other exporters' names for a JSONL record's id and text, tried after those its file's name asks for: TIREx and
# ir_datasets' export (`docno` / `doc_id`, `text`), Pyserini (`id`, `contents`), BEIR's corpus.jsonl (`_id`, `title`,
# `text`), `docid`; ir_datasets' export of args.me (`ir_datasets export argsme/... docs --format jsonl`: `doc_id`,
# `conclusion`, `premises_texts`; its premises, with their stance, are not exported).
ID_FIELDS = ("docno", "doc_id", "docid", "id", "_id")
TEXT_FIELDS = ("text", "contents", "body", "premises_texts")
TITLE_FIELDS = ("title", "conclusion")  # what opens a record's text
# A re-rank line's document id: TIREx's `docno`, else ir_datasets' and BEIR tools' names for it.
RERANK_ID_FIELDS = ("docno", "doc_id", "docid")
# How a corpus's bytes become documents, in its cache entries' key: raised when the same bytes read otherwise (JSONL,
# 2: the fields above, a BEIR title; 3: docid; 4: any record's title; 5: a title without a text; 6: a line opening
# with a byte order mark; 7: premises_texts, a conclusion as title; 8, every kind: args.me's arguments one a line
# or as a list, a number as an argument's id, UTF-16 without a byte order mark; 9: up to 100,000 characters, not
# 20,000; 10: a whole float as an id, an args.me argument over 16 MB passed over), so that a kept cache never serves
# an index of the old reading.
CORPUS_READING = 10


def find_corpora(input_dir: Path) -> list[CorpusSource]:
    """Every corpus in `input_dir`, by file name, in order of precedence (the args.me portal files are one)."""
    found = []
    for kind, id_field, text_field, names in CORPUS_FILES:
        if kind == "argsme":  # each file as it is or gzipped (`args-me.json.gz`), as it is where both are there
            paths = [path for name in names if (path := _as_is_or_gzipped(input_dir / name))]
            if paths:
                found.append(CorpusSource(kind, tuple(paths), id_field, text_field))
                packed = [copy for path in paths if (copy := path.with_name(path.name + ".gz")).is_file()]
                if packed:  # the gzipped copies passed over, so that the log names them
                    found.append(CorpusSource(kind, tuple(packed), id_field, text_field))
        else:
            found.extend(CorpusSource(kind, (input_dir / name,), id_field, text_field) for name in names
                         if (input_dir / name).is_file())
    return found


def _as_is_or_gzipped(path: Path) -> Path | None:
    """The file at `path`, else the one at `path` + ".gz", else None."""
    return next((file for file in (path, path.with_name(path.name + ".gz")) if file.is_file()), None)


def corpus_file(path: Path) -> CorpusSource:
    """The corpus that `--corpus FILE` names, read as its file name says (CORPUS_FILES); under another name, a
    .json file as args.me and a .jsonl[.gz] file as its first record's fields say (`records_source`)."""
    if not path.is_file():
        raise ToucheError(f"--corpus {path}: {not_a_file(path) or 'no such file'}")
    for kind, id_field, text_field, names in CORPUS_FILES:
        if path.name in names:
            return CorpusSource(kind, (path,), id_field, text_field)
    if path.name.lower().endswith((".json", ".json.gz")):  # args-me.json.gz too
        return CorpusSource("argsme", (path,))
    if path.name.lower().endswith(_JSONL_SUFFIXES):
        return records_source(path)
    raise ToucheError(f"--corpus {path}: expected args.me JSON (.json[.gz]) or JSON lines (.jsonl, .jsonl.gz), or one "
                      f"of the names {', '.join(CORPUS_NAMES)}")


def _records(path: Path) -> bool:
    """Whether `--corpus` would rank a file of another name: args.me JSON (args-me-1.0-cleaned.json, as its
    release names it: an "arguments" key early on) or JSON lines (`records_source`); not a queries file (BEIR's
    queries.jsonl has an `_id` and a `text`)."""
    if path.name.lower().startswith("queries."):
        return False
    if path.is_file() and path.name.lower().endswith(".json"):
        try:
            with path.open("rb") as stream:
                return b'"arguments"' in stream.read(1 << 16)
        except OSError:
            return False
    if not (path.is_file() and path.name.lower().endswith(_JSONL_SUFFIXES)):
        return False
    try:
        records_source(path)
    except ToucheError:
        return False
    return True


def records_source(path: Path, lines: int = 100) -> CorpusSource:
    """A JSONL corpus of any name, read as the fields of its first record among `lines` say: qid, a document id
    (`RERANK_ID_FIELDS`) and text a re-rank file; else documents under an id and a text field (`ID_FIELDS`,
    `TEXT_FIELDS`)."""
    for _, record in itertools.islice(json_lines(path, Defects(path.name)), lines):
        if record is None:  # not JSON (or null): the next line may be
            continue
        if not isinstance(record, dict):
            raise ToucheError(f"--corpus {path}: its first JSON line is {type(record).__name__}, not an object")
        fields = set(record)
        if {"qid", "text"} <= fields and fields & set(RERANK_ID_FIELDS):
            return CorpusSource("rerank", (path,), "docno", "text")
        if {"id", "contents"} <= fields:  # passages, as Touché 2022 writes them
            return CorpusSource("jsonl", (path,), "id", "contents")
        id_field = next((name for name in ID_FIELDS if name in fields), None)
        text_field = next((name for name in TEXT_FIELDS if name in fields), None)
        if id_field and text_field or _is_argument(record):
            return CorpusSource("jsonl", (path,), id_field or "id", text_field or "contents")
        raise ToucheError(f"--corpus {path}: its first record has the fields {_field_names(record)}; expected an "
                          f"id ({', '.join(ID_FIELDS)}) and a text ({', '.join(TEXT_FIELDS)}), or qid, docno and "
                          "text (a re-rank file)")
    raise ToucheError(f"--corpus {path}: no JSON object in its first {lines} lines")


def _field_names(fields: Iterable[str]) -> str:
    """A record's fields as an error names them: sorted, each cut at 40 characters, the first 10."""
    names = sorted(name[:40] for name in fields)
    return ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")


def detect_corpus(input_dir: Path, choice: Path | None = None) -> CorpusSource | None:
    """The corpus in `input_dir` a run ranks (None when there is none, e.g. a ChatNoir input): `choice` (--corpus,
    a path or a file name in `input_dir`) if given, else the first of CORPUS_FILES present. Two local corpora of
    different kinds (args.me, passages, documents) are an error naming both; anything ignored is logged."""
    found = find_corpora(input_dir)
    if choice is None:
        # A corpus's name on no file (a dangling link, a directory, a pipe) was passed over for the next corpus: a
        # re-rank file's mount gone ranked the whole corpus instead, without a word.
        for *_, names in CORPUS_FILES:
            paths = [input_dir / name for name in names]
            for path in paths:
                if problem := not_a_file(path):
                    raise ToucheError(f"{path}: {problem}; remove it, or choose the corpus with --corpus")
            if any(path.is_file() for path in paths):  # the corpus read: names after it never stood in its place
                break
    if choice is not None:
        source = corpus_file(given_file(choice, input_dir, "--corpus"))
        chosen = {path.resolve() for path in source.paths}  # out of the group it came in (a portal file, a copy)
        rest = [replace(other, paths=tuple(path for path in other.paths if path.resolve() not in chosen))
                for other in found]
        _log_choice(source, [other for other in rest if other.paths], "--corpus")
        return source
    if not found:
        return None
    source, others = found[0], found[1:]
    if source.kind != "rerank":
        rivals = [other for other in others if other.paths[0].name.removesuffix(".gz")
                  != source.paths[0].name.removesuffix(".gz") and {other.kind, source.kind} != {"argsme"}]
        if rivals:
            raise ToucheError(f"two corpora in {input_dir}: {source.name} and {rivals[0].name}; choose one with "
                              f"--corpus {source.paths[0].name} or --corpus {rivals[0].paths[0].name}")
    _log_choice(source, others, "a re-rank file comes first" if source.kind == "rerank" else "precedence")
    return source


def _log_choice(source: CorpusSource, ignored: list[CorpusSource], why: str) -> None:
    if ignored:
        names = [other.name for other in ignored]
        if source.name in names:  # `--corpus passages.jsonl.gz` found beside the input's own: say which is which
            log.warning("ranking %s (%s); ignoring %s", ", ".join(str(path.absolute()) for path in source.paths),
                        why, ", ".join(str(path.absolute()) for other in ignored for path in other.paths))
        else:
            log.warning("ranking %s (%s); ignoring %s", source.name, why, ", ".join(names))


def check_choice(backend: str, choice: Path | None) -> None:
    """--corpus names a local corpus, which --backend chatnoir never reads: refused, before any work."""
    if choice is not None and backend == "chatnoir":
        raise ToucheError("--corpus names a local corpus; it cannot go with --backend chatnoir")


def choose_source(input_dir: Path, backend: str, choice: Path | None, chatnoir: bool) -> CorpusSource | None:
    """Where a run's candidates come from: a local corpus (detect_corpus), or ChatNoir (None) with --backend
    chatnoir, or with `chatnoir` credentials in the input and no local corpus. Both present: the log says which."""
    check_choice(backend, choice)
    if backend == "chatnoir":
        ignored = find_corpora(input_dir)
        if ignored:
            log.warning("ranking ChatNoir's results (--backend chatnoir); ignoring %s",
                        ", ".join(other.name for other in ignored))
        return None
    source = detect_corpus(input_dir, choice)
    if source is None and not (backend == "auto" and chatnoir):
        for path in (input_dir / name for name in CORPUS_NAMES):  # there, but unreadable as a file: say so
            if problem := not_a_file(path):
                raise ToucheError(f"{path}: {problem}")
        named = [path.name for path in sorted(input_dir.iterdir() if input_dir.is_dir() else ()) if _records(path)]
        hint = f"; to rank {named[0]}, pass --corpus {named[0]}" if named else ""
        chatnoir_hint = ("" if backend == "local" else "; or, to search ChatNoir, chatnoir-credentials.json there "
                         "or --backend chatnoir with CHATNOIR_API_KEY")  # --backend local: the user chose
        raise ToucheError(f"no corpus in {input_dir}: expected args.me JSON (args-me.json[.gz]), passages.jsonl[.gz], "
                          f"documents.jsonl[.gz] or rerank.jsonl[.gz]{chatnoir_hint}{hint}")
    if source is not None and chatnoir:
        log.warning("ranking %s (a local corpus comes first); ignoring the ChatNoir credentials (--backend "
                    "chatnoir uses them)", source.name)
    return source


class Defects:
    """Counts what a read skipped (by reason) and repaired, and warns once at the end."""

    def __init__(self, source: str):
        self.source, self.reasons, self.replaced_bytes = source, Counter(), 0
        self.plain = False  # a .gz file that is not gzip-compressed, read as it is
        self.shapeless: list[str] = []  # args.me files of another shape, none of whose arguments were read
        self.damage: tuple[str, str] | None = None  # the args.me file whose parse first failed, and where

    def add(self, reason: str) -> None:
        self.reasons[reason] += 1

    def report(self) -> None:
        problems = []
        if self.reasons:
            details = ", ".join(counted(count, reason) for reason, count in sorted(self.reasons.items()))
            problems.append(f"skipped {counted(sum(self.reasons.values()), 'record')} ({details})")
        if self.replaced_bytes:
            problems.append(f"replaced {counted(self.replaced_bytes, 'undecodable byte')} with U+FFFD")
        if self.plain:
            problems.append("read as it is: not gzip-compressed, whatever its name")
        if self.damage:
            name, problem = self.damage
            problems.append(f"{'' if name == self.source else name + ': '}{problem}; skipped to the next argument")
        if self.shapeless:
            problems.append(f"no arguments read from {', '.join(self.shapeless)} (an args.me file holds them as "
                            '{"arguments": [...]})')
        if problems:
            log.warning("%s: %s", self.source, "; ".join(problems))


class JsonGuard:
    """What an args.me stream goes through before ijson parses it, chunk by chunk (`feed`), at about 2 ms per MB:
    - the nesting depth of what ijson reads is counted (`admit`; brackets in strings do not count), and a
      depth past MAX_JSON_DEPTH is an error (ijson's memory grows with the square of the depth);
    - a run of more than MAX_DIGITS digits becomes one "0": as an integer, ijson's C parser (3.6) crashes the
      process on it (Python refuses to convert it), and converting takes time that grows with the square of the
      digits (4 million: 77 s). A number's value is never read; such a run in a text is shortened too;
    - a control character (U+0000-U+001F) becomes a space: JSON forbids them raw in a string, where a careless
      exporter writes them (a tab or a NUL in a premise), and outside strings the allowed ones are whitespace."""

    _ESCAPE = re.compile(rb"\\.", re.DOTALL)  # an escaped quote or backslash ends no string
    _OTHER_BYTES = bytes(byte for byte in range(256) if byte not in b'"[]{}')
    _LONG_DIGITS = re.compile(rb"(?<![0-9])[0-9]{%d,}" % (MAX_DIGITS + 1))  # from a run's start: linear
    _DIGITS_AS_ZERO = bytes(ord("0") if chr(byte) in "0123456789" else ord("x") for byte in range(256))
    _CONTROLS_AS_SPACES = bytes(ord(" ") if byte < 0x20 else byte for byte in range(256))

    def __init__(self, path: Path):
        self.path = path
        self.depth = self.deepest = 0
        self._in_string, self._backslash, self._digits = 0, b"", b""
        self.too_deep = False  # the parser got all it may (`admit`)
        self.shallowest: int | None = 0  # see `_count_depth`

    def feed(self, chunk: bytes, final: bool = False) -> bytes:
        """The chunk as ijson gets it: control characters as spaces, digit runs shortened, the digits at its end
        held back for the next chunk (all of it at the `final` one)."""
        chunk = self._digits + chunk.translate(self._CONTROLS_AS_SPACES)
        cut = len(chunk) if final else len(chunk.rstrip(b"0123456789"))
        self._digits = chunk[cut:][: MAX_DIGITS + 1]
        chunk = chunk[:cut]
        if chunk.translate(self._DIGITS_AS_ZERO).find(b"0" * (MAX_DIGITS + 1)) >= 0:  # rare: seek the runs then
            chunk = self._LONG_DIGITS.sub(b"0", chunk)
        return chunk

    def restart(self) -> None:
        """Count the depth from nothing again: where the parse starts over (`_Resumable.resume`)."""
        self.depth = self.deepest = self._in_string = self.shallowest = 0
        self._backslash, self.too_deep = b"", False

    def admit(self, chunk: bytes) -> int:
        """How much of `chunk`, the next bytes the parser would read, it may read: all, or up to where the depth
        passes MAX_JSON_DEPTH. The parser then gets that much, and its next read is the error, unless damage before
        it (a stray quote that turns what is in a string and what is not) makes the parse start over first."""
        if self.too_deep:
            raise ToucheError(f"{self.path}: JSON nested more than {MAX_JSON_DEPTH} levels deep; not an args.me "
                              "JSON file")
        state = (self.depth, self.deepest, self._in_string, self._backslash)

        def too_deep(size: int) -> bool:  # counting the first `size` bytes from `state`
            self.depth, self.deepest, self._in_string, self._backslash = state
            return self._count_depth(chunk[:size]) > MAX_JSON_DEPTH

        if not too_deep(len(chunk)):
            return len(chunk)
        within = bisect.bisect_left(range(len(chunk)), True, key=too_deep) - 1  # rare, so sought by halves
        too_deep(within)  # counted up to there
        self.too_deep = True
        return within if within else self.admit(chunk)  # nothing admitted: the error now, not an empty read (the end)

    def _count_depth(self, chunk: bytes) -> int:
        """The deepest level so far, counted on through `chunk`; `shallowest` is then the least depth at which the
        chunk was outside a string (None where it was within one throughout)."""
        data = self._ESCAPE.sub(b"", self._backslash + chunk)
        self._backslash = b"\\" if data.endswith(b"\\") else b""  # its escaped byte is in the next chunk
        marks = np.frombuffer(data.translate(None, self._OTHER_BYTES), np.uint8)
        if not marks.size:
            self.shallowest = None if self._in_string else self.depth
            return self.deepest
        quotes = marks == ord('"')
        quotes_so_far = np.cumsum(quotes) + self._in_string  # odd: inside a string
        self._in_string = int(quotes_so_far[-1]) & 1
        outside = ~quotes & (quotes_so_far & 1 == 0)
        steps = np.where(outside, np.where((marks == ord("[")) | (marks == ord("{")), 1, -1), 0)
        levels = self.depth + np.cumsum(steps)
        after_outside = quotes_so_far & 1 == 0  # after each such mark the parser is outside a string
        self.shallowest = int(levels[after_outside].min()) if after_outside.any() else None
        self.depth, self.deepest = int(levels[-1]), max(self.deepest, int(levels.max()))
        return self.deepest


class _Utf8Reader(io.RawIOBase):
    """A corpus file's bytes (gzip or plain) as valid UTF-8: the one place where corpus bytes become text.

    A file that opens with a UTF-16 or UTF-32 byte order mark is read in that encoding, and so is UTF-16 without
    one (`_bom_encoding`). Undecodable bytes become U+FFFD and are counted, so one Latin-1 byte among 868k passages
    costs one character, not the run. A truncated or corrupt gzip stream is a ToucheError naming the file: a partial
    corpus must not silently give a different run. Other compressions (xz, bzip2, zip, zstd, 7z, lz4, gzip inside
    gzip) are refused by name; a `.gz` file that is not gzip is read as it is.
    """

    def __init__(self, path: Path, defects: Defects, guard: JsonGuard | None = None):
        super().__init__()
        self.path, self.defects, self.guard = path, defects, guard
        self._raw = path.open("rb")
        named_gzip, magic = path.name.lower().endswith(".gz"), self._raw.read(2)
        self._raw.seek(0)
        if magic == b"\x1f\x8b" or (named_gzip and not magic):  # gzip by its bytes, whatever the file's name
            self._raw = gzip.GzipFile(fileobj=self._raw, mode="rb")
        elif named_gzip:  # plain JSON lines under a .gz name, as `gzip -d -c` of it would give them
            defects.plain = True
        self._encoding, self._decoder = None, None  # chosen by the first bytes
        self._pending, self._offset, self._tail, self._done = b"", 0, b"", False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._offset == len(self._pending) and not self._done:
            chunk = self._read_raw()
            self._done = not chunk
            if self._decoder is None:
                if chunk[:2] == b"\x1f\x8b" and isinstance(self._raw, gzip.GzipFile):  # was "no line holds JSON"
                    raise ToucheError(f"{self.path}: gzip inside gzip (compressed twice): unpack it once")
                packed = next((name for magic, name in _ARCHIVES if magic.match(chunk)), None)
                if packed:  # was "no line holds JSON" after thousands of undecodable bytes; a zip -0 lost a record
                    raise ToucheError(f"{self.path}: packed with {packed}, which is not read here: unpack it, or "
                                      f"pack it with gzip")
                self._encoding = _bom_encoding(chunk)
                self._decoder = codecs.getincrementaldecoder(self._encoding)("replace")
            text = self._decoder.decode(chunk, final=self._done)
            # A U+FFFD the file itself holds (EF BF BD in UTF-8, maybe split across chunks) is not a repair.
            self.defects.replaced_bytes += text.count("\ufffd") - (
                (self._tail + chunk).count(_ENCODED_FFFD) if self._encoding == "utf-8-sig" else 0)
            self._tail = (self._tail + chunk)[-2:]
            self._pending, self._offset = text.encode("utf-8"), 0
            if self.guard is not None:
                self._pending = self.guard.feed(self._pending, final=self._done)
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
        if isinstance(self._raw, gzip.GzipFile) and self._raw.fileobj is not None:
            self._raw.fileobj.close()  # a GzipFile given a file object leaves it open
        self._raw.close()
        super().close()


# What other packers write first (bzip2: its block size, then a block's or the end's signature): no text opens so.
_ARCHIVES = tuple((re.compile(magic, re.S), name) for magic, name in (
    (rb"\xfd7zXZ\x00", "xz"), (rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)", "bzip2"), (rb"PK\x03\x04", "zip"),
    (rb"\(\xb5/\xfd", "zstd"), (rb"7z\xbc\xaf\x27\x1c", "7z"), (rb"\x04\x22\x4d\x18", "lz4"),
    # tar's magic and version (POSIX, GNU) at byte 257: `tar czf passages.jsonl.gz ...`'s header joined the first
    # record ("ustar " alone is words: "...gustar a todos")
    (rb".{257}ustar(?:\x0000|  \x00)", "tar")))


def _bom_encoding(start: bytes) -> str:
    """How a corpus file whose first bytes are `start` decodes: by its byte order mark, else as UTF-8. A BOM is no
    part of the JSON; a UTF-16 one is what Windows' "Unicode" and PowerShell 5's ">" write, which read as UTF-8 lost
    the first record and gave the others to json.loads as UTF-16."""
    if start[:4] in UTF32_MARKS:
        return "utf-32"
    return bom_encoding(start) or _utf16_without_mark(start[:32]) or "utf-8-sig"


def _utf16_without_mark(head: bytes) -> str | None:
    """UTF-16 without a byte order mark where `head` holds a NUL in every other place and no other NUL, as ASCII
    characters written so do (JSON opens with them: `{"`): such a file was "invalid char in json text"."""
    head = head[:len(head) & ~1]
    if len(head) < 8:
        return None
    even, odd = head[0::2], head[1::2]
    if not odd.strip(b"\0") and b"\0" not in even:
        return "utf-16-le"
    return "utf-16-be" if not even.strip(b"\0") and b"\0" not in odd else None


def open_text(path: Path, defects: Defects, guard: JsonGuard | None = None) -> io.BufferedReader:
    """A binary stream of valid UTF-8 over a corpus file: iterate it for lines, or hand it to ijson through a
    `JsonGuard`."""
    return io.BufferedReader(_Utf8Reader(path, defects, guard), _CHUNK_BYTES)


def check_opens(source: CorpusSource) -> None:
    """Each of the corpus's files read to its first bytes, as `open_text` reads them: a file packed otherwise than
    with gzip, or a damaged gzip header, is a ToucheError before the work, not after the models load."""
    for path in source.paths:
        with open_text(path, Defects(path.name)) as stream:
            stream.read(1)


def json_lines(path: Path, defects: Defects) -> Iterator[tuple[int, object | None]]:
    """(line number, parsed value) of each non-blank line of a JSONL file read by `open_text` (of each value on
    it, where values were written back to back: `_json_values`); None for a line that is not JSON, longer than
    MAX_LINE_BYTES or holding more than MAX_LINE_CONTAINERS brackets (each reader decides whether that is skipped,
    counted or an error). A file whose first line opens a JSON array of records is an error of every reader: written
    an element a line, each element's line ("{...},") would be a bad line but the last, read as if the file were JSON
    lines; a first line that is a whole array of plain values (a header, `["id", "text"]`) is a bad line. A file
    whose last line has no line end (readline stops short only at the end) and ends within a record (`_cut_record`)
    is an error too: a file cut short (a copy stopped, a disk filled) must not silently give a run of the documents
    before the cut, as a cut gzip stream does not; a whole last record that is no JSON (a bad escape) is a bad line."""
    with open_text(path, defects) as lines:
        number, opened = 0, False
        while line := lines.readline(MAX_LINE_BYTES):
            number += 1
            if not opened and line.strip():
                opened = True
                if line.lstrip().startswith(b"[") and not _plain_values(line):
                    raise ToucheError(f"{path.name}: a JSON array, not JSON lines (one object a line)")
            if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):  # read past the rest, a piece at a time
                while (rest := lines.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass
                yield number, None
                continue
            if not line.strip():
                continue
            if line.count(b"[") + line.count(b"{") > MAX_LINE_CONTAINERS:
                yield number, None
                continue
            records = _json_values(line)
            if records == [None] and not line.endswith(b"\n") and _cut_record(line):  # the last line
                raise ToucheError(f"{path.name}: cut short: its last line (line {number}) ends within a record, "
                                  "without a line end; copy the file again")
            yield from ((number, record) for record in records)
            records = None  # not held while the next line is parsed


def _cut_record(line: bytes) -> bool:
    """Whether a line's last JSON object ends before it is closed: the parser runs out of text, or out of a string
    (a DOS end-of-file mark aside). A whole object that is no JSON (a bad escape, a Python repr) is not cut."""
    text = line.decode(errors="replace").strip().lstrip("\ufeff").rstrip("\x1a \t\r")
    position = 0
    while position < len(text) and text[position] == "{":  # each object of those written back to back
        try:
            _, position = _JSON.raw_decode(text, position)
        except json.JSONDecodeError as error:
            return error.msg.startswith("Unterminated string") or error.pos >= len(text)
        except RecursionError:
            return False
        position = _SPACE.match(text, position).end()
    return False


def _plain_values(line: bytes) -> bool:
    """Whether a line is a whole JSON array none of whose elements is an object or an array. One that opens with an
    object or an array is not, said without parsing it: a corpus written as one array may be a line of megabytes."""
    if line.lstrip().removeprefix(b"[").lstrip()[:1] in (b"{", b"["):
        return False
    value = _json_values(line)[0]
    return isinstance(value, list) and not any(isinstance(item, (dict, list)) for item in value)


_JSON = json.JSONDecoder(strict=False)  # strict=False: a raw control character in a string (a tab) costs no record
_SPACE = re.compile(r"[ \t\r\n\ufeff]*")  # and the byte order marks `cat` of files saved with one leaves


def _json_values(line: bytes) -> list:
    """The JSON value of a line, or the objects written back to back on it (`cat` of files whose last line has no
    newline joins two records; at most MAX_LINE_CONTAINERS of them); [None] for a line that is neither. Values
    other than objects back to back are no records: 64 MB of "1 1 1 ..." would have been 32 million of them."""
    try:
        text = line.decode().lstrip(" \t\ufeff")  # a line opening with a BOM: a file saved with one, joined by `cat`
        return [_JSON.decode(text)]
    except (ValueError, RecursionError) as error:  # not JSON, an integer past 4,300 digits, nested too deep
        if not str(error).startswith("Extra data"):
            return [None]
    values, position = [], _SPACE.match(text).end()
    try:
        while position < len(text):
            if text[position] != "{":
                return [None]
            value, position = _JSON.raw_decode(text, position)
            values.append(value)
            position = _SPACE.match(text, position).end()
    except (ValueError, RecursionError):
        return [None]
    return values


def read_documents(source: CorpusSource, report: bool = True) -> Iterator[Document]:
    """Stream the unique, non-empty documents of an args.me or JSONL corpus.

    `report=False` keeps a second pass over the same file from warning about its defects again.
    """
    defects, seen = Defects(source.name), set()
    records = _argsme_documents(source, defects) if source.kind == "argsme" else _jsonl_documents(source, defects)
    count = 0
    for document in records:
        if not visible(document.text):
            defects.add("empty text")
        elif document.doc_id in seen:
            defects.add("duplicate id")
        else:
            seen.add(document.doc_id)
            count += 1
            yield document
    if report:
        defects.report()
    if count == 0:  # where nothing was skipped, there was nothing: an empty file, blank lines
        raise ToucheError(f"{source.name}: no usable documents" + ("" if defects.reasons else " (it holds no record)"))


def _jsonl_documents(source: CorpusSource, defects: Defects) -> Iterator[Document]:
    """The documents of JSONL files: each record's id and text under the fields its file's name asks for, else under
    another exporter's names for them (`ID_FIELDS`, `TEXT_FIELDS`); a record's title (`TITLE_FIELDS`: BEIR's, an
    args.me argument's conclusion) opens its text, unless the text opens with it already, as args.me's reading
    does; a title without a text field is the text, as a title with an empty text is. A file none of whose records
    has an id and a text field is an error naming the fields its first record has."""
    ids = (source.id_field, *(name for name in ID_FIELDS if name != source.id_field))
    texts = (source.text_field, *(name for name in TEXT_FIELDS if name != source.text_field))
    for path in source.paths:
        read, objects, first = 0, 0, None  # the fields of the first record that is an object, for an error naming them
        for _, record in json_lines(path, defects):
            if not isinstance(record, dict):  # None: not JSON
                defects.add("bad line")
                continue
            objects += 1
            id_field = next((name for name in ids if name in record), None)
            text_field = next((name for name in texts if name in record), None)
            if text_field is None and _is_argument(record):  # args.me's arguments one a line: premises, stances
                document = _argument_document(record)
                if document is None:
                    defects.add(_unread(record))
                    continue
                read += 1
                yield document
                continue
            title = next((record[name] for name in TITLE_FIELDS if isinstance(record.get(name), str)), None)
            if id_field is None or text_field is None and title is None:
                if first is None:
                    first = list(record)  # its names only: a record's text may be megabytes
                defects.add("line without an id or a text field")
                continue
            doc_id, text = record_id(record[id_field]), record[text_field] if text_field else ""  # a title alone
            if doc_id is None or not isinstance(text, str):
                defects.add("bad line")
                continue
            if title is not None and (title := title.strip()) and not _opens_with(text, title):
                text = f"{title} {text}"
            read += 1
            yield Document(doc_id, bounded_text(text))
        if not objects and defects.reasons:
            defects.report()
            raise ToucheError(f"{path.name}: no line holds a JSON object (JSON lines: one object a line, not a JSON "
                              "array or an object written over several lines)")
        if not read and first is not None:
            defects.report()
            raise ToucheError(f"{path.name}: no record has an id ({', '.join(ids)}) and a text ({', '.join(texts)}) "
                              f"field (its first has {_field_names(first)})")


def _opens_with(text: str, title: str) -> bool:
    """Whether a text opens with its title already, as whole words in any case ("Gun" does not open "Guns are ...")."""
    opening = text.lstrip()[:len(title) + 1]
    return opening[:len(title)].casefold() == title.casefold() and not opening[len(title):].isalnum()


def _argsme_documents(source: CorpusSource, defects: Defects) -> Iterator[Document]:
    """The arguments of a corpus's args.me files, one file after another (`_argsme_file`)."""
    for path in source.paths:
        yield from _argsme_file(path, defects)


def _argsme_file(path: Path, defects: Defects) -> Iterator[Document]:
    """One args.me file's arguments. A damaged argument (invalid JSON after the first argument read) is skipped:
    the parse resumes at the next argument's start (`_Resumable`). A file cut short, invalid before its first
    argument or after its last argument start, or damaged where the parse cannot tell what it lost, is an error."""
    last = None  # the id of the last argument read: where a damaged file can be looked at
    items = 0
    guard = JsonGuard(path)
    with open_text(path, defects, guard) as text:
        shape = argsme_shape(text.peek(_Resumable.BUFFER))
        stream = _Resumable(text, guard, shape)
        while True:
            try:
                for item in ijson.items(stream, shape.prefix, buf_size=_Resumable.BUFFER,
                                        multiple_values=shape.prefix == ""):
                    items += 1
                    for argument in _arguments_in(item):
                        if not stream.read_anew(argument):
                            continue
                        document = _argument_document(argument)
                        if document is None:
                            defects.add(_unread(argument))
                        else:
                            last = document.doc_id
                            yield document
                if not items:  # valid JSON of another shape: "arguments" a mapping, ...
                    defects.shapeless.append(path.name)  # said once with the corpus's other defects
                return
            except (ijson.JSONError, UnicodeDecodeError) as error:  # a lone surrogate escape: UnicodeDecodeError
                if last is None and path.stat().st_size == 0:
                    raise ToucheError(f"{path}: an empty file, not args.me JSON") from None
                opened = not items and stream.opens_as_argsme()  # its first argument damaged, not another file
                problem = _json_problem(error, last, opened=opened, read=items > 0)
                if problem.startswith("truncated") or not items and not opened:
                    raise ToucheError(f"{path}: {problem}") from None
                if stream.failed_at_start():  # the argument it began at is damaged
                    defects.add("invalid JSON argument")
                cannot = stream.resume()
                # After the damage, only the file's end, or garbage that holds no argument: nothing more to read.
                ended = cannot == _Resumable.ENDED or (cannot == _Resumable.NO_START and not stream.ids_after and (
                    "trailing garbage" in problem or shape is ARGUMENT_LINES))  # lines: a bad last line
                if cannot is not None and not ended:
                    raise ToucheError(f"{path}: {problem}, {cannot}") from None
                if defects.damage is None:  # said with the corpus's other defects, once whatever the passes
                    defects.damage = (path.name, problem)
                if ended:
                    return


class ArgsmeShape(NamedTuple):
    """How an args.me file holds its arguments: where ijson finds them (`prefix`), what a parse resumed at an
    argument reads first (`head`), how the file opens and ends."""

    prefix: str
    head: bytes
    opening: re.Pattern
    ending: re.Pattern
    depth: int  # the nesting depth between two arguments: deeper is within one


# args.me's release: {"arguments": [...]}; the list alone (what `jq .arguments` writes); arguments one after
# another (JSON lines under args.me's names).
ARGSME = ArgsmeShape("arguments.item", b'{"arguments": [',
                     re.compile(rb'\s*\{\s*"arguments"\s*:\s*\[\s*' + ARGUMENT_START.pattern),
                     re.compile(rb"\]\s*\}\s*\Z"), 2)
ARGUMENT_LIST = ArgsmeShape("item", b"[", re.compile(rb"\s*\[\s*" + ARGUMENT_START.pattern), re.compile(rb"\]\s*\Z"),
                            1)
ARGUMENT_LINES = ArgsmeShape("", b"", re.compile(rb"\s*" + ARGUMENT_START.pattern), re.compile(rb"\}\s*\Z"), 0)


def argsme_shape(start: bytes) -> ArgsmeShape:
    """The shape of an args.me file that opens with `start` (its first decoded bytes): a list; arguments one after
    another where an argument starts it and premises follow (every argument has them); else args.me's own."""
    if start.lstrip()[:1] == b"[":
        return ARGUMENT_LIST
    lines = ARGUMENT_LINES.opening.match(start) and re.search(rb'"premises"\s*:', start)  # not passages' lines
    return ARGUMENT_LINES if lines else ARGSME


def _arguments_in(item) -> Iterator:
    """The arguments an item of args.me's list holds: itself, and those that damage put inside it, which still
    parses: a list of arguments ("[" one more, "]" later), or arguments among its premises ("]}" lost)."""
    if isinstance(item, list) and item:
        for value in item:
            yield from _arguments_in(value)
        return
    yield item
    premises = item.get("premises") if isinstance(item, dict) else None
    for premise in premises if isinstance(premises, list) else ():
        if isinstance(premise, dict) and isinstance(premise.get("id"), str) and (
                "premises" in premise or "conclusion" in premise):
            yield from _arguments_in(premise)


class _Resumable:
    """The guarded args.me text as ijson reads it, able to start over at a later argument (`resume`).

    What ijson read since just before the last argument it gave is kept (at least 4 MB, at most 64). After a damaged
    argument the parse resumes at the first argument start there (`starts`: "{" and an argument's own key, or the
    key the file's first argument begins with) whose id was not given before, the shape's head put before it: at
    the damaged argument, whose parse then fails at its own start, and then at the one after it. Arguments read
    again are passed over (`read_anew`). Each resume starts further on, so a file of damage ends; damage further
    than is kept from the last argument given cannot be resumed after.
    """

    BUFFER = 1 << 16  # ijson's read size: an argument ends less than this before the position where ijson gave it
    KEEP = 4 << 20  # how much is kept at least (at most twice this), and what ijson read after the last argument
    MAX_KEPT = 64 << 20  # given, up to this much: the damage lies in there
    # An argument's bytes at most (args.me's are kilobytes): ijson builds each whole, in time that grows with the
    # square of a string's length (a 128 MB premise in a 196 kB gzip: 41 s; 513 MB: over 10 minutes) and memory
    # out of all proportion to the file (6 million premises in a 450 kB gzip: 2.6 GB). A longer one is damage,
    # passed over as damage is.
    MAX_ARGUMENT = 16 << 20
    ENDED = "ended"  # what `resume` returns for damage in the last argument
    NO_START = "and no argument starts after it"
    _ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*")')

    def __init__(self, stream: io.BufferedReader, guard: JsonGuard, shape: ArgsmeShape):
        self.stream, self.guard = stream, guard  # the guard counts the depth of what the parser reads
        self.shape = shape
        self.kept, self.kept_from = bytearray(), 0  # the stream's bytes from position kept_from on
        self.position = 0  # how far into the stream ijson has read
        self.head = b""  # what a resumed parse reads before the kept bytes
        self.start: int | None = None  # where the current parse began: None for the file's start
        self.given_at: int | None = None  # the position where the current parse gave its last argument
        self.starts = ARGUMENT_START  # and the key the file's first argument begins with, once known
        self.given: dict[str, int] = {}  # the ids (or contents) of the arguments given while kept, by position
        self.ids_after = 0  # see `_next_start`
        self.reach = self.BUFFER  # the most the next read gives
        self.outside = 0  # the last position read outside any argument (`read`)

    def read(self, size: int) -> bytes:
        # A resumed parse reads little at first: one that fails at its start costs that much, not BUFFER.
        size, self.reach = min(size, self.reach), min(2 * self.reach, self.BUFFER)
        if self.head:
            data, self.head = self.head[:size], self.head[size:]
            return data
        offset = self.position - self.kept_from
        if offset < len(self.kept):  # read again, after a resume
            data = bytes(self.kept[offset:offset + size])
        else:
            data = self.stream.read(size)
            self.kept += data
            if len(self.kept) > 2 * self.KEEP:
                after_given = -1 if self.given_at is None else self.given_at - self.BUFFER
                self._drop_before(max(min(self.position - self.KEEP, after_given), self.position - self.MAX_KEPT))
        data = data[:self.guard.admit(data)]  # the rest is kept, and read again
        self.position += len(data)
        # Read between arguments, or in JSON around their list (metadata), not only within one of its strings: ijson
        # reads a string whole, in time that grows with the square of its length (200 MB: 90 s).
        if self.guard.shallowest is not None and self.guard.shallowest <= self.shape.depth:
            self.outside = self.position
        since = max(self.given_at if self.given_at is not None else self.start or 0, self.outside)
        if self.position - since > self.MAX_ARGUMENT + self.BUFFER:
            raise ijson.JSONError(f"an argument over {self.MAX_ARGUMENT >> 20} MB")
        return data

    def _drop_before(self, position: int) -> None:
        if position > self.kept_from:
            del self.kept[:position - self.kept_from]
            self.kept_from = position
            self.given = {key: at for key, at in self.given.items() if at >= position}

    @staticmethod
    def _key(argument) -> str:
        """Its id, else its content (such an argument is malformed: the key only keeps it from being counted twice)."""
        key = argument.get("id") if isinstance(argument, dict) else None
        if isinstance(key, str):
            return key
        try:
            return "\0" + json.dumps(argument, sort_keys=True, default=str)
        except (RecursionError, ValueError):  # too deep to write
            return "\0"

    def read_anew(self, argument) -> bool:
        """Note that ijson gave `argument`; False where a resumed parse reads one given before."""
        if self.starts is ARGUMENT_START and isinstance(argument, dict) and argument:
            first = re.escape(json.dumps(next(iter(argument)))[1:-1].encode())
            self.starts = re.compile(ARGUMENT_START.pattern.replace(b"(?:", b"(?:" + first + b"|", 1))
        if isinstance(argument, dict):
            self.given_at = self.position
        key = self._key(argument)
        if self.start is not None and self.given.get(key, -1) >= self.start:  # given from where this parse began
            return False
        self.given[key] = self.position
        return True

    def opens_as_argsme(self) -> bool:
        """Whether the file opens as its shape does and an argument starts (`{"arguments": [{"id": ...`): damage in
        its first argument is then that argument's, not a file of another kind."""
        return self.kept_from == 0 and self.shape.opening.match(self.kept) is not None

    def failed_at_start(self) -> bool:
        """Whether the resumed parse that just failed failed on its first argument: that argument is damaged."""
        return self.start is not None and self.given_at is None

    def resume(self) -> str | None:
        """Start the parse over at the first argument start after the last argument given that was not given
        itself; else why not: none is found (ENDED where the file ends as args.me does), or the bytes after the last
        argument given are no longer kept."""
        # The damage lies after the end of the last argument given, which ends less than BUFFER before where it was
        # given; a resumed parse that gave none failed at its own start.
        after = -1 if self.given_at is None else self.given_at - self.BUFFER
        if self.start is not None:
            after = max(after, self.start)
        if max(after + 1, 0) < self.kept_from:
            return f"more than {self.MAX_KEPT >> 20} MB after the last argument read"
        while (at := self._next_start(after)) is not None:
            following = self.starts.search(self.kept, at + 1 - self.kept_from)  # its argument ends before
            found = self._ID.search(self.kept, at - self.kept_from, following.start() if following else len(self.kept))
            if found is None or not self._given(found):
                break
            after = at
        if at is None:
            # The file ends as args.me does, and no other argument's id follows the damaged one's
            whole = self.shape.ending.search(self.kept[-64:]) is not None and self.ids_after <= 1
            return self.ENDED if whole else self.NO_START
        self.start = self.position = at
        self.head, self.given_at, self.reach = self.shape.head, None, 1024
        self.guard.restart()
        self.guard.admit(self.shape.head)
        return None

    def _given(self, found: re.Match) -> bool:
        """Whether the id `_ID` found is one given."""
        try:
            return json.loads(found.group(1)) in self.given
        except ValueError:
            return False

    def _new_ids(self, data) -> int:
        return sum(not self._given(found) for found in self._ID.finditer(data))

    def _next_start(self, after: int) -> int | None:
        """The position of the first argument start after `after`, reading on where the kept bytes hold none (then
        `ids_after` counts the ids not given on the way: arguments that start in a way `starts` does not know)."""
        at = max(0, after + 1 - self.kept_from)
        if (found := self.starts.search(self.kept, at)) is None:
            self.ids_after = self._new_ids(self.kept[at:])
        while found is None:
            data = self.stream.read(self.BUFFER)
            if not data:
                return None
            self._drop_before(max(after + 1, self.kept_from + len(self.kept) - 64))  # a start begins in the last
            self.ids_after += self._new_ids(data)                                      # bytes, if there
            self.kept += data
            found = self.starts.search(self.kept, max(0, after + 1 - self.kept_from))
        return self.kept_from + found.start()


def _json_problem(error: ijson.JSONError, last: str | None, opened: bool = False, read: bool = False) -> str:
    """What is wrong with an args.me file where ijson stopped, and where: after which argument (`read`: after
    arguments without an id; `opened`: in the first argument of a file that opens as args.me does)."""
    message = error.args[0] if error.args else ""
    if isinstance(message, bytes):  # yajl's C backend: the text around the error, cut within a character
        message = message.decode("utf-8", "replace")
    reason = str(message).strip().splitlines()[0] if str(message).strip() else type(error).__name__
    where = (f"after argument {last!r}" if last is not None else "after an argument without an id" if read
             else "before its first argument")
    if "premature EOF" in reason:
        return f"truncated: the JSON ends {where}"
    if opened:
        return f"invalid JSON in its first argument ({reason})"
    # JSON after the first value: likely one record per line, read as JSON lines under a .jsonl name
    nothing_read = last is None and not read
    lines = "; JSON lines? name the file .jsonl" if "trailing garbage" in reason and nothing_read else ""
    unknown = ", or not an args.me JSON file" if nothing_read else ""
    return f"invalid JSON {where}{unknown} ({reason}){lines}"


def _is_argument(record: dict) -> bool:
    """Whether a JSON record is an args.me argument: an id and premises (no exporter's text field)."""
    return "id" in record and "premises" in record


def _argument_document(argument) -> Document | None:
    """An args.me argument as conclusion + premises, keeping the first premise's stance (PRO/CON) toward the
    conclusion; None for one without an id a run can hold (`record_id`: a string or a number, one word)."""
    doc_id = record_id(argument.get("id")) if isinstance(argument, dict) else None
    if doc_id is None:
        return None
    premises = argument.get("premises")
    premises = [premises] if isinstance(premises, (str, dict)) else premises if isinstance(premises, list) else []
    # Other exporters' shapes: a premise as a bare string, its text a list of sentences.
    premises = [{"text": premise} if isinstance(premise, str) else premise for premise in premises
                if isinstance(premise, (str, dict))]
    conclusion = argument.get("conclusion")
    conclusion = conclusion.strip() if isinstance(conclusion, str) else ""
    # No premises: a record of another exporter, its text under a JSONL text field (a list of {"id", "text"}).
    texts = [premise.get("text") for premise in premises] or [
        next((argument[name] for name in TEXT_FIELDS if isinstance(argument.get(name), str)), "")]
    parts = [conclusion] + [_premise_text(text) for text in texts]
    text = " ".join(part.strip() for part in parts if part.strip())
    stance = premises[0].get("stance") if premises else None
    stance = stance.strip().upper() if isinstance(stance, str) else None  # "pro", " CON" from other exporters
    # A stance is only worth keeping with the conclusion it is toward.
    stated = stance in ("PRO", "CON") and bool(conclusion)
    return Document(doc_id, bounded_text(text), stance if stated else None,
                    bounded_text(conclusion) if stated else None)


def _unread(argument) -> str:
    """Why `_argument_document` read no document from an argument, as the corpus's warning counts it."""
    if not isinstance(argument, dict):
        return "malformed argument"
    return "argument without an id" if argument.get("id") is None else "argument with an id no run can hold"


def _premise_text(value) -> str:
    """A premise's text: a string, or the strings of a list joined."""
    if isinstance(value, list):
        return " ".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def rerank_candidates(source: CorpusSource, titles: dict[str, str], per_query: int) -> dict[str, list[Candidate]]:
    """The candidates of a re-rank file (`read_rerank`) for the topics whose titles are given by number. Said before
    any work: a file holding none of them is an error (its topics file belongs to other queries), and its queries that
    are no topic ("011" beside topic 11), or whose text shares no word (`word_stems`) with their topic's title (a
    topics file of other numbers: the candidates of one question ranked for another), are named in a warning rather
    than found after the run."""
    queries: dict[str, str] = {}
    wanted = set(titles)
    candidates = read_rerank(source, per_query, queries, wanted)
    if not wanted & set(candidates):
        raise ToucheError(f"{source.name} holds none of the {len(titles)} topics' numbers (its queries: "
                          f"{listed(sorted(candidates))})")
    foreign = sorted(set(candidates) - wanted)
    if foreign:
        log.warning("%s: ignoring the candidates of %d %s no topic (%s)", source.name, len(foreign),
                    "query that is" if len(foreign) == 1 else "queries that are", listed(foreign))
    unlike = [qid for qid in sorted(wanted & set(queries)) if word_stems(queries[qid])
              and word_stems(titles[qid]) and not word_stems(queries[qid]) & word_stems(titles[qid])]
    if unlike:
        log.warning("%s: %d of its queries share no word with their topic's title, so their candidates may be ranked "
                    "for another question (%s: %.80r, the topic %.80r); do the topics file and it belong together?",
                    source.name, len(unlike), unlike[0], queries[unlike[0]], titles[unlike[0]])
    return {qid: found for qid, found in candidates.items() if qid in wanted}


def read_rerank(source: CorpusSource, per_query: int | None = None, queries: dict[str, str] | None = None,
                wanted: set[str] | None = None) -> dict[str, list[Candidate]]:
    """A TIREx re-rank file: each query's candidates in the first stage's order (`FirstStageOrder`), at most
    `per_query` of them (the others are never held: a re-rank file of gigabytes, a few MB gzipped, must not fill the
    memory); app/topics.py reads its queries as topics, and `queries`, where given, gets each query's first text. A
    document may have another text under another query: each query's is read (`passages.read_passages`). The
    warnings on how queries are ordered count the `wanted` ones only, where given (the others are not ranked)."""
    defects, best, first = Defects(source.name), {}, None  # first: the fields of the first object
    seen: set[tuple[str, str]] = set()
    for _, record in json_lines(source.paths[0], defects):
        try:
            name = next(field for field in RERANK_ID_FIELDS if field in record)
            qid, doc_id, text = query_id(record["qid"]), record_id(record[name]), record.get("text")
        except (KeyError, TypeError, AttributeError, StopIteration):  # not an object (None: not JSON), an id missing
            if first is None and isinstance(record, dict):
                first = list(record)  # its names only: a record's text may be megabytes
            defects.add("bad line")
            continue
        if qid is None or doc_id is None:
            defects.add("bad line")
            continue
        if text is None:  # a first stage that wrote ids and scores only: said apart, the stages need a text
            defects.add("line without text")
            continue
        if not isinstance(text, str):
            defects.add("bad line")
            continue
        if not visible(text):
            defects.add("empty text")
            continue
        if (qid, doc_id) in seen:
            defects.add("duplicate id")
            continue
        seen.add((qid, doc_id))
        if queries is not None and qid not in queries and isinstance(record.get("query"), str):
            queries[qid] = record["query"]
        best.setdefault(qid, FirstStageOrder(per_query)).add(Document(doc_id, bounded_text(text)),
                                                              first_stage_number(record.get("score")),
                                                              first_stage_number(record.get("rank")))
    defects.report()
    if not best and first is not None and ("qid" not in first or not set(RERANK_ID_FIELDS) & set(first)):
        raise ToucheError(f"{source.name}: no record has the fields qid and docno (or "
                          f"{', '.join(RERANK_ID_FIELDS[1:])}; its first has {_field_names(first)})")
    if not best:
        raise ToucheError(f"{source.name}: no usable candidates")
    candidates = {qid: found.candidates(qid) for qid, found in best.items()}
    ranked = {qid: found for qid, found in best.items() if wanted is None or qid in wanted}
    if beyond := [qid for qid, found in ranked.items() if found.lines > found.limit]:
        log.warning("%s: %d of its queries hold more than %d candidates (e.g. %s: %d); the first stage's best %d of "
                    "each are ranked (--candidates)", source.name, len(beyond), per_query, beyond[0],
                    best[beyond[0]].lines, per_query)
    orders = Counter(found.order for found in ranked.values())
    if orders["file"]:
        log.warning("%s: %d of its queries ranked in the file's order: a score and a rank missing or no finite "
                    "number", source.name, orders["file"])
    if orders["rank, scores rising"]:
        log.warning("%s: %d of its queries ranked by rank, as their scores rise with it (distances?) and are not "
                    "used", source.name, orders["rank, scores rising"])
    return candidates


def first_stage_number(value) -> float | None:
    """A re-rank score or rank as `record_score` reads one, or a string holding one in digits trec_eval reads
    ("86.0", as a TREC run's columns converted by splitting give it; not Python's "1_000" or "３")."""
    if isinstance(value, str):
        if not DECIMAL.fullmatch(value.strip(" \t\n\r\f\v")):
            return None
        value = float(value)
    return record_score(value)


def _rising(spans: dict[float, tuple[float, float]]) -> bool:
    """Whether scores are distances: from each rank to the next (`spans`: each rank's lowest and highest score)
    they never fall and somewhere rise. Within a rank they have no order: ties given to the higher score hid
    distances, and the line order invented them."""
    ordered = [spans[rank] for rank in sorted(spans)]
    steps = [(lower[1], higher[0]) for lower, higher in zip(ordered, ordered[1:])]
    return any(a < b for a, b in steps) and all(a <= b for a, b in steps)


class FirstStageOrder:
    """One query's re-rank candidates as they are read, of which the first `limit` in the first stage's order are
    kept: by rank, lowest first, where every candidate has one (a finite number); else by score, highest first, where
    every candidate has one; else in file order. Ties go to the earlier line (among equal ranks, to the higher
    score, or to the smaller where the scores are distances). Each order's best `limit` are held while reading, as
    which applies is known at the end."""

    def __init__(self, limit: int | None):
        self.limit = math.inf if limit is None else limit
        self.by_score: list[tuple[float, int, Document]] | None = []  # heaps, the worst kept first; None: unusable
        self.by_rank: list[tuple[float, float, int, Document, float | None]] | None = []
        self.by_distance: list[tuple[float, float, int, Document]] | None = []  # by rank, smaller scores first
        # Each rank's lowest and highest score over all lines: whether the scores are distances, known at the end.
        self.spans: dict[float, tuple[float, float]] | None = {}
        self.first: list[Document] = []
        self.lines = 0
        self.order = "file"  # how `candidates` ordered them: "score", "rank", "rank, scores rising" or "file"

    def add(self, document: Document, score: float | None, rank: float | None) -> None:
        order, self.lines = self.lines, self.lines + 1
        if len(self.first) < self.limit:
            self.first.append(document)
        if score is None:
            self.by_score = None
        elif self.by_score is not None:
            self._keep(self.by_score, (score, -order, document), 2)
        if rank is None or score is None:
            self.spans = None
        elif self.spans is not None:
            low, high = self.spans.get(rank, (score, score))
            self.spans[rank] = (min(low, score), max(high, score))
        if rank is None:
            self.by_rank = self.by_distance = None
        elif self.by_rank is not None:
            self._keep(self.by_rank, (-rank, score if score is not None else -math.inf, -order, document, score), 3)
            # Which of the two applies is known at the end: a cut within tied ranks keeps the smaller distances.
            self._keep(self.by_distance, (-rank, -score if score is not None else -math.inf, -order, document), 3)

    def _keep(self, heap: list, entry: tuple, keys: int) -> None:
        """Push `entry` onto a heap of the best `limit`, compared by its first `keys` values (the last of them the
        line's order, which is unique: documents are never compared)."""
        if len(heap) < self.limit:
            heapq.heappush(heap, entry)
        elif entry[:keys] > heap[0][:keys]:
            heapq.heapreplace(heap, entry)

    def candidates(self, qid: str) -> list[Candidate]:
        """Best first, as --candidates and the rerank depth cut them; a candidate's score is the first stage's,
        or the order's own (`scores_or_order`: 1, 0.99, ...) where one is missing or where, by rank, they rise from
        rank to rank over all lines and never fall (distances, then also smaller first among equal ranks)."""
        if self.by_rank is not None:
            rising = self.spans is not None and _rising(self.spans)
            self.order = "rank, scores rising" if rising else "rank"
            if rising:  # among equal ranks, the smaller distance first
                closest = sorted(self.by_distance, key=lambda entry: entry[:3], reverse=True)
                return [Candidate(qid, entry[3], score)
                        for entry, score in zip(closest, scores_or_order([None] * len(closest)))]
            ranked = sorted(self.by_rank, key=lambda entry: entry[:3], reverse=True)
            return [Candidate(qid, entry[3], score)
                    for entry, score in zip(ranked, scores_or_order([entry[4] for entry in ranked]))]
        if self.by_score is not None:
            self.order = "score"
            return [Candidate(qid, document, score)
                    for score, _, document in sorted(self.by_score, key=lambda entry: entry[:2], reverse=True)]
        self.order = "file"
        return [Candidate(qid, document, score)
                for document, score in zip(self.first, scores_or_order([None] * len(self.first)))]
