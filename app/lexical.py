"""First stage: an in-process BM25 index (bm25s) with English stemming and stopwords.

The index is built in chunks of documents, so memory stays bounded on 868k passages: bm25s's own `index()`
keeps every document as a Python list of token ids (~4.5 GB at that size). The scores equal `bm25s.BM25()`'s
bit for bit, in its own matrix layout, so a real `bm25s.BM25` retrieves, saves and loads the result.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterable, Iterator
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer
from tqdm import tqdm

log = logging.getLogger(__name__)

CHUNK_DOCS = 20_000


def make_tokenizer() -> Tokenizer:
    """Lower-cased word tokens, English stopwords removed, Snowball-stemmed."""
    return Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")


class TermCounts:
    """The (document, term, frequency) triples of a corpus, added a chunk of tokenized documents at a time.

    Per chunk it keeps document lengths, distinct terms per document, and per (document, term) pair in
    document then term order the term id (int32) and its frequency (the smallest unsigned type that holds
    it, uint8 in practice): 5 bytes a pair.
    """

    def __init__(self):
        self.lengths: list[np.ndarray] = []
        self.terms_per_doc: list[np.ndarray] = []
        self.terms: list[np.ndarray] = []
        self.frequencies: list[np.ndarray] = []
        self.doc_freq = np.zeros(0, dtype=np.int64)

    def add(self, token_ids: list[list[int]]) -> None:
        lengths = np.fromiter(map(len, token_ids), dtype=np.int64, count=len(token_ids))
        flat = np.fromiter(itertools.chain.from_iterable(token_ids), dtype=np.int64, count=int(lengths.sum()))
        docs = np.repeat(np.arange(len(token_ids), dtype=np.int64), lengths)
        pairs, frequencies = np.unique(docs << 32 | flat, return_counts=True)  # sorted: document, then term
        terms = (pairs & 0xFFFFFFFF).astype(np.int32)
        self.lengths.append(lengths.astype(np.int32))
        self.terms_per_doc.append(np.bincount(pairs >> 32, minlength=len(token_ids)).astype(np.int32))
        self.terms.append(terms)
        self.frequencies.append(frequencies.astype(np.min_scalar_type(frequencies.max(initial=0))))
        counts = np.bincount(terms)
        if len(counts) > len(self.doc_freq):
            self.doc_freq = np.pad(self.doc_freq, (0, len(counts) - len(self.doc_freq)))
        self.doc_freq[: len(counts)] += counts

    def score_matrix(self, retriever: bm25s.BM25, vocab_size: int) -> dict:
        """The `scores` dict `retriever.index()` would build: a term-major CSC matrix of per-document scores.

        The Lucene variant with the retriever's k1, b and dtypes; the arithmetic follows bm25s.scoring step by
        step (float64, rounded to float32 once), so the values are bit-identical, and within a term rows
        ascend, as bm25s sorts them. Frees the chunks as it goes.
        """
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int32)
        doc_freq = np.pad(self.doc_freq, (0, vocab_size - len(self.doc_freq)))
        indptr = np.zeros(vocab_size + 1, dtype=np.int64)
        np.cumsum(doc_freq, out=indptr[1:])
        data = np.empty(indptr[-1], dtype=retriever.dtype)
        indices = np.empty(indptr[-1], dtype=retriever.int_dtype)
        if len(lengths):
            idf = _lucene_idf(doc_freq, len(lengths)).astype(retriever.dtype)
            average_length = lengths.mean()
            next_slot = indptr[:-1].copy()
            first_row = 0
            while self.terms:
                chunk_lengths, terms_per_doc = self.lengths.pop(0), self.terms_per_doc.pop(0)
                terms, frequencies = self.terms.pop(0), self.frequencies.pop(0).astype(np.float64)
                norm = retriever.k1 * ((1 - retriever.b) + retriever.b * chunk_lengths.astype(np.float64)
                                       / average_length)
                scores = idf[terms] * (frequencies / (np.repeat(norm, terms_per_doc) + frequencies))
                rows = np.repeat(np.arange(first_row, first_row + len(chunk_lengths)), terms_per_doc)
                first_row += len(chunk_lengths)
                _scatter_by_term(terms, next_slot, (scores, data), (rows, indices))
        return {"data": data, "indices": indices, "indptr": indptr, "num_docs": len(lengths)}


def _lucene_idf(doc_freq: np.ndarray, num_docs: int) -> np.ndarray:
    """log(1 + (N - df + 0.5) / (df + 0.5)), 0 for unseen terms; with math.log, as bm25s (np.log differs from
    it in the last bit of some values)."""
    idf = np.zeros(len(doc_freq), dtype=np.float64)
    seen = np.flatnonzero(doc_freq)
    ratios = 1 + (num_docs - doc_freq[seen] + 0.5) / (doc_freq[seen] + 0.5)
    idf[seen] = np.fromiter(map(math.log, ratios.tolist()), dtype=np.float64, count=len(seen))
    return idf


def _scatter_by_term(terms: np.ndarray, next_slot: np.ndarray, *values: tuple[np.ndarray, np.ndarray]) -> None:
    """Write each (source, target) pair's values at their term's next free slots, keeping their order.

    A pair's slot is its term's next free slot plus its rank among this call's pairs of that term; `next_slot`
    then moves past them, so calls in row order leave each term's rows ascending.
    """
    order = np.argsort(terms, kind="stable")
    sorted_terms = terms[order]
    starts = np.flatnonzero(np.r_[True, sorted_terms[1:] != sorted_terms[:-1]])
    runs = np.diff(np.r_[starts, len(sorted_terms)])
    slots = next_slot[sorted_terms] + np.arange(len(sorted_terms)) - np.repeat(starts, runs)
    for source, target in values:
        target[slots] = source[order]
    next_slot[sorted_terms[starts]] += runs


def _chunks(items: Iterator, size: int) -> Iterator[list]:
    while chunk := list(itertools.islice(items, size)):
        yield chunk


def top_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k rows of highest score and their scores, best first, equal scores in row order; rows scoring 0 are
    dropped."""
    rows = np.flatnonzero(scores > 0)
    if len(rows) > k:  # those above the k-th best score, then the first rows of that score
        kth = np.partition(scores[rows], len(rows) - k)[len(rows) - k]
        above, tied = rows[scores[rows] > kth], rows[scores[rows] == kth]
        rows = np.concatenate([above, tied[:k - len(above)]])
    rows = rows[np.lexsort((rows, -scores[rows]))]
    return rows.astype(np.int64), scores[rows]


class LexicalIndex:
    """BM25 (bm25s's default: Lucene variant, k1=1.5, b=0.75) over a list of texts; rows are positions in it."""

    def __init__(self, retriever: bm25s.BM25, tokenizer: Tokenizer, size: int):
        self.retriever, self.tokenizer, self.size = retriever, tokenizer, size

    @classmethod
    def build(cls, texts: Iterable[str], progress: bool = False, chunk_docs: int = CHUNK_DOCS) -> "LexicalIndex":
        """Index `texts` (any iterable, read once), `chunk_docs` at a time."""
        tokenizer = make_tokenizer()
        counts = TermCounts()
        # One token stream across chunks: the vocabulary grows exactly as in a single tokenize() call.
        stream = tokenizer.streaming_tokenize(texts, update_vocab=True)
        with tqdm(desc="BM25 index", unit="doc", disable=not progress) as bar:
            for chunk in _chunks(stream, chunk_docs):
                counts.add(chunk)
                bar.update(len(chunk))
        retriever = bm25s.BM25()
        vocab = tokenizer.get_vocab_dict()
        retriever.scores = counts.score_matrix(retriever, len(vocab))
        # what BM25.index() leaves behind for a Tokenized corpus that already holds the empty token
        retriever.vocab_dict, retriever.nonoccurrence_array = vocab, None
        retriever.unique_token_ids_set = set(vocab.values())
        # Queries need only stem -> id; word -> stem and word -> id are caches with an entry per distinct word
        # (~0.8M words, ~130 MB at 868k passages) that refill for query words. The empty token stays.
        tokenizer.word_to_stem = {}
        tokenizer.word_to_id = {word: sid for word, sid in tokenizer.word_to_id.items() if word == ""}
        return cls(retriever, tokenizer, retriever.scores["num_docs"])

    def search(self, queries: list[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query, the top-k rows and their BM25 scores, best first, equal scores in corpus order (bm25s's
        top-k kept the last of tied documents, the last first: 30 copies of a text gave rows 29, 28, ... 25); rows
        with score 0 are dropped."""
        k = min(k, self.size)
        return [top_rows(self.retriever.get_scores(query_ids).astype(np.float32) if query_ids and k
                         else np.zeros(0, dtype=np.float32), k)
                for query_ids in self._query_ids(queries)]

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every row for `query` (0 where it shares no term)."""
        query_ids = self._query_ids([query])[0]
        if not query_ids or not self.size:
            return np.zeros(self.size, dtype=np.float32)
        return self.retriever.get_scores(query_ids).astype(np.float32)

    def save(self, directory: str | Path) -> None:
        """Write the scores and the vocabulary into `directory` (bm25s's own files)."""
        self.retriever.save(str(directory), show_progress=False)
        self.tokenizer.save_vocab(str(directory))

    @classmethod
    def load(cls, directory: str | Path) -> "LexicalIndex":
        """The index `save` wrote, its scores memory-mapped."""
        retriever = bm25s.BM25.load(str(directory), mmap=True, show_progress=False)
        tokenizer = make_tokenizer()
        tokenizer.load_vocab(str(directory))
        return cls(retriever, tokenizer, int(retriever.scores["num_docs"]))

    def _query_ids(self, queries: list[str]) -> list[list[int]]:
        """Each query's term ids. bm25s gives a query with no indexed term its empty token, which exactly the
        documents without an indexed word hold ("!!! ???"): such a query has no terms, so it finds nothing."""
        empty = self.tokenizer.get_vocab_dict().get("")
        return [[term for term in ids if term != empty]
                for ids in self.tokenizer.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)]
