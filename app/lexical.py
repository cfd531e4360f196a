"""First stage: an in-process BM25 index (bm25s) with English stemming and stopwords."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer

log = logging.getLogger(__name__)


def make_tokenizer() -> Tokenizer:
    """Lower-cased word tokens, English stopwords removed, Snowball-stemmed."""
    return Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")


class LexicalIndex:
    """BM25 (Lucene variant, k1=1.2, b=0.75) over a list of texts; rows are positions in that list."""

    def __init__(self, retriever: bm25s.BM25, tokenizer: Tokenizer, size: int):
        self.retriever, self.tokenizer, self.size = retriever, tokenizer, size

    @classmethod
    def build(cls, texts: Iterable[str], size: int | None = None, progress: bool = False) -> "LexicalIndex":
        tokenizer = make_tokenizer()
        # bm25s wants a length for a generator (only for its progress bar): infinity counts without a total.
        tokens = tokenizer.tokenize(texts, length=math.inf if size is None else size, return_as="tuple",
                                    show_progress=progress)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=progress)
        return cls(retriever, tokenizer, len(tokens.ids))

    def search(self, queries: list[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query, the top-k rows and their BM25 scores, best first; rows with score 0 are dropped."""
        k = min(k, self.size)
        tokens = self.tokenizer.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
        results = []
        for query_ids in tokens:
            if not query_ids:
                results.append((np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)))
                continue
            rows, scores = self.retriever.retrieve([query_ids], k=k, show_progress=False, n_threads=1)
            keep = scores[0] > 0
            results.append((rows[0][keep].astype(np.int64), scores[0][keep].astype(np.float32)))
        return results
