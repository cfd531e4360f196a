"""On-disk cache of what a run computes from a local corpus: the BM25 index and passage embeddings.

Entries live under `<cache dir>/<corpus fingerprint>/`, so a second run on the same corpus skips index
building and re-encoding, and a changed corpus never reads stale entries. Arrays are plain .npy/.npz/JSON.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import tempfile
import tokenize
import zipfile
from pathlib import Path

import numpy as np

from .corpus import CORPUS_READING, CorpusSource
from .encoder import EMBEDDING_DIM
from .files import TEMPORARY_SUFFIX, atomic_file, os_reason, remove_stale_temporaries, small_file
from .records import TEXT_READING

log = logging.getLogger(__name__)
_PROCESS_LIMITS = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)  # the process's, not the entry's


def fingerprint(source: CorpusSource) -> str:
    """A short key for a corpus: how it is read (kind, fields, `CORPUS_READING`, `TEXT_READING`), and per
    file its name and the SHA-256 of its bytes.

    Every byte counts, so an edit anywhere (one id in the middle of a 1 GB JSONL file, same size) never reads
    stale entries; hashing runs at about 1.8 GB/s here, under a second for args.me's 1.6 GB. Unlike mtime it
    survives copying the input elsewhere.
    """
    reading = f"|{CORPUS_READING}|text {TEXT_READING}"
    digest = hashlib.sha256(f"{source.kind}|{source.id_field}|{source.text_field}{reading}".encode())
    for path in source.paths:
        with path.open("rb") as stream:
            digest.update(f"|{path.name}|{hashlib.file_digest(stream, 'sha256').hexdigest()}".encode())
    return digest.hexdigest()[:16]


def text_digest(text: str) -> str:
    """The key of a text's embedding in a cache: what the vector depends on, whatever id the text has in a run."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _digests(directory: Path) -> dict[str, str]:
    """SHA-256 of each file of a cache entry by name, but its `complete` mark and temporary files (`.name...`)."""
    digests = {}
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.name != "complete" and not path.name.startswith("."):
            with path.open("rb") as stream:
                digests[path.name] = hashlib.file_digest(stream, "sha256").hexdigest()
    return digests


# The index's document ids, one a line (no id holds whitespace: the corpus readers skip such ids). Not a numpy
# array of str, whose every row is as wide as the longest id: one id of 100,000 characters among 5,000 made a file
# of 2 GB, one of 1,000,000 characters an allocation of 18.6 GB.
DOC_IDS = "doc_ids.txt"


class CorpusCache:
    """The cache entries of one corpus; every method tolerates a missing or damaged entry (it recomputes)."""

    def __init__(self, root: Path, key: str):
        self.key, self.directory = key, root / key
        for directory in (self.directory, self.directory / "index"):
            remove_stale_temporaries(directory)  # a killed run's half-written entry: up to gigabytes each

    def load_index(self):
        """The cached PassageIndex and document ids, or None."""
        from .passages import PassageIndex

        path = self.directory / "index"
        try:
            if not (path / "complete").exists():  # on an entry that cannot be searched (mode 000): an OSError
                return None
            written = json.loads(small_file(path / "complete").decode("utf-8"))
            if not isinstance(written, dict):
                raise ValueError("its complete mark is no JSON object")
            # Of another PassageIndex.LAYOUT: documents cut into other passages, or ranked whole (no starts file)
            if written.get("layout") != PassageIndex.LAYOUT:
                log.info("building the BM25 index in %s again: its cache is of an older layout", path)
                return None
            # An entry copied from another corpus's (its files whole) ranked this corpus's documents by the other
            # one's texts, or failed on an id the other lacks.
            if written.get("corpus") != self.key:
                raise ValueError("it was built from another corpus")
            if written["files"] != _digests(path):
                raise ValueError("a file differs from the one written")
            text = (path / DOC_IDS).read_text(encoding="utf-8")
            doc_ids = text.split("\n") if text else []
            index = PassageIndex.load(path, len(doc_ids))
        except (OSError, ValueError, KeyError, EOFError, RecursionError) as error:
            # Out of file descriptors or memory, the entry may be whole: said as unread, not as damaged.
            state = "unread" if getattr(error, "errno", None) in _PROCESS_LIMITS else "damaged"
            log.warning("ignoring the %s index cache in %s (%s)", state, path, error)
            return None
        log.info("BM25 index of %d documents loaded from %s", len(doc_ids), path)
        return index, doc_ids

    def save_index(self, index, doc_ids: list[str]) -> None:
        """Keep the index for the next run; a cache that cannot take it (a full disk) costs that, not this run.

        The files are written beside the entry and renamed into it, each a new file: a run sharing the cache that
        maps the entry's files (`load_index`) keeps reading the ones it mapped. Written over in place, they were cut
        under it, and it died of SIGBUS."""
        path = self.directory / "index"
        try:
            path.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".index-", suffix=TEMPORARY_SUFFIX, dir=self.directory))
            try:
                index.save(staging)
                (staging / DOC_IDS).write_text("\n".join(doc_ids), encoding="utf-8")
                (path / "complete").unlink(missing_ok=True)  # a run loading meanwhile builds its own
                for file in staging.iterdir():
                    os.replace(file, path / file.name)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            # Without it a half-written entry is never loaded; with it a file changed since (cut, emptied, one
            # byte flipped: a wrong score or id, silently) is found.
            with atomic_file(path / "complete") as out:
                json.dump({"corpus": self.key, "layout": index.LAYOUT, "files": _digests(path)}, out)
        except OSError as error:
            log.warning("cannot cache the BM25 index in %s (%s); the run goes on without caching it", path,
                        os_reason(error))

    def embeddings(self, name: str) -> "EmbeddingStore":
        """The passage embeddings made under `name` (the encoder and its settings)."""
        return EmbeddingStore(self.directory / f"embeddings-{name}.npz")


class EmbeddingStore:
    """Text digest (`text_digest`) -> embedding, grown across runs; `missing` then `add` then `save`."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: dict[str, int] = {}
        self.vectors = np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        if os.path.lexists(path):  # False where it cannot be looked at (a folder this user may not search): as missing
            try:
                if not path.is_file():  # a FIFO held the run for ever, a link to /dev/zero filled the memory
                    raise ValueError("it is no regular file")
                with path.open("rb") as start:  # else numpy reads it as a pickle: it "contains pickled data"
                    if start.read(4) != b"PK\x03\x04":
                        raise ValueError("it is no zip of arrays")
                with np.load(path, allow_pickle=False) as arrays:
                    # Written stored, never deflated: a deflated member is a zip bomb's way to gigabytes.
                    if any(info.compress_type != zipfile.ZIP_STORED for info in arrays.zip.infolist()):
                        raise ValueError("a member is compressed")
                    # np.load reads a member only as far as its .npy header says, and zipfile checks a member's CRC
                    # at its end alone: a flipped bit in a header (its length, shape or dtype) went unchecked, and
                    # the vectors read shifted, under the right ids. Read every member whole first.
                    if (bad := arrays.zip.testzip()) is not None:
                        raise ValueError(f"member {bad} fails its CRC")
                    ids, vectors = arrays["ids"].tolist(), arrays["vectors"]
                if (not isinstance(ids, list) or vectors.shape[1:] != self.vectors.shape[1:]
                        or len(vectors) != len(ids) or len(set(ids)) != len(ids)):
                    raise ValueError("its ids and vectors do not match")
                self.rows, self.vectors = {doc_id: row for row, doc_id in enumerate(ids)}, vectors
            # SyntaxError (tokenize.TokenError too, via numpy's header parser), NotImplementedError (a compression
            # method flipped to one zipfile lacks), RuntimeError (the encryption flag): all damage, not the run's end.
            except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, SyntaxError,
                    NotImplementedError, RuntimeError, tokenize.TokenError) as error:  # cut, foreign, flipped
                log.warning("ignoring the damaged embedding cache %s (%s)", path, error)
        self.added = False

    def missing(self, doc_ids: list[str]) -> list[str]:
        return [doc_id for doc_id in doc_ids if doc_id not in self.rows]

    def add(self, doc_ids: list[str], vectors: np.ndarray) -> None:
        if not doc_ids:
            return
        start = len(self.rows)
        self.rows.update((doc_id, start + i) for i, doc_id in enumerate(doc_ids))
        self.vectors = np.concatenate([self.vectors, vectors.astype(np.float32, copy=False)])
        self.added = True

    def get(self, doc_ids: list[str]) -> np.ndarray:
        return self.vectors[[self.rows[doc_id] for doc_id in doc_ids]]

    def save(self) -> None:
        """Write atomically (temporary file, then rename) when something was added; a cache that cannot take it
        (a full disk) keeps the old file and costs the next run the encoding, not this run."""
        if not self.added:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(self.path, binary=True) as out:
                np.savez(out, ids=np.array(list(self.rows), dtype=str), vectors=self.vectors)
        except OSError as error:
            log.warning("cannot cache embeddings in %s (%s); the run goes on without caching them", self.path,
                        os_reason(error))
            return
        self.added = False
