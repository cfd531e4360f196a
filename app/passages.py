"""Long documents become passages: sentence-bounded windows of about the size of a Touché 2022 passage.

Every model here was trained on passages (Touché 2022 Task 2: median 144 words, 9% over 200) and reads at most 256
word pieces, but web pages and debate posts run to thousands of words and open with menus. Cutting a document into
windows lets each stage read the parts that matter (`app.pipeline` picks which) instead of the first 256 pieces.

Which windows a topic reads (`read_passages`): a document the encoder reads whole stays one passage, its text as
it is; a longer one gives its first window (where a page says what it is) and the windows where BM25 scores the
topic's query highest (the next ones where it finds none), at most `PER_DOCUMENT`. On the dev web pages (all
visible text, 25 windows of 200 words per page on average) the first window and the two best BM25 windows ranked as
well as all windows did and better than two (judged-only nDCG@5); a main-content page has 8 such windows on average,
so a page costs about 3 encodings instead of 1.

Sentences come from a rule (an end mark followed by space and a capital A-Z, digit or quote; a line break), so no
model or data file is needed. Windows take whole sentences while they fit `max_words`; a sentence longer than that
(a menu with no punctuation, a list run together) is cut between words. `windows` cuts a text so for training and
measurement, where a text that fits one window stays as it is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .lexical import LexicalIndex, top_rows
from .records import Document

# Words per window: most 2022 passages fit whole (91% have at most 200 words), and 200 words are about the 256
# word pieces the encoder reads (1.2-1.3 pieces per word in English prose). BM25 ranks documents by such windows.
MAX_WORDS = 200
# Words per window the stages read (`read_passages`): web text has more pieces a word (names, numbers, punctuation),
# and of the 536 dev pages' 200-word windows 38% were over 256 pieces, 5.5% of their pieces never read; of 150-word
# windows 3.7%, 1.3%. Read so, the web-page dev loop 0.585 / 0.594 / 0.766 -> 0.600 / 0.606 / 0.763 (2020 and 2021
# relevance, 2021 quality; within its noise), 142 -> 126 CPU s; tira-input 0.881 / 0.881 / 0.759 -> 0.879 / 0.888
# / 0.765 (with stance macro-F1).
READ_WORDS = 150
# Windows read per long document and topic: the first and the best by BM25.
PER_DOCUMENT = 3
# Fewer words than this, a window joins the one before it in `PassageIndex` (see `scored_windows`).
MIN_SCORED_WORDS = 50

# A sentence ends at . ! ? (and closing quotes or brackets after them) followed by space and what can start a
# sentence; or at a line break, which on a web page ends a block (a menu item, a heading, a paragraph).
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=[ \t]+[\"'\u201c\u2018(\[]?[A-Z0-9])|(?=\n)")
_WORD = re.compile(r"\S+")
# What BM25 scores a document by (`scored_windows`) counts a run of non-space characters longer than this as one word
# per MAX_WORD_CHARS characters, and cuts it so: a run of 50,000 characters without spaces after an argument (a
# comma-joined tag or URL list, CJK text, a base64 blob) was one "word" of the argument's window, 6,000 BM25 tokens
# whose length normalization dropped the argument from rank 8 to 123 in its topic (a helper's attack).
MAX_WORD_CHARS = 40
_BOUNDED_WORD = re.compile(r"\S{1,%d}" % MAX_WORD_CHARS)


def word_count(text: str, bounded: bool = False) -> int:
    """str.split's words of `text`; `bounded`, a longer one than MAX_WORD_CHARS counts once a MAX_WORD_CHARS."""
    words = text.split()
    if not bounded or max(map(len, words), default=0) <= MAX_WORD_CHARS:
        return len(words)
    return sum(-(-len(word) // MAX_WORD_CHARS) for word in words)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, without the whitespace between them."""
    spans, start = [], 0
    for boundary in _SENTENCE_END.finditer(text):
        if text[start: boundary.end()].strip():
            spans.append((start, boundary.end()))
        start = boundary.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return [_strip(text, span) for span in spans]


def _strip(text: str, span: tuple[int, int]) -> tuple[int, int]:
    start, end = span
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _word_spans(text: str, start: int, end: int, bounded: bool) -> list[tuple[int, int]]:
    return [found.span() for found in (_BOUNDED_WORD if bounded else _WORD).finditer(text, start, end)]


def window_spans(text: str, max_words: int = MAX_WORDS) -> list[tuple[int, int]]:
    """(start, end) of each window of `text`: consecutive whole sentences of at most `max_words` words together,
    a longer sentence cut into pieces of `max_words` words. Windows do not overlap and cover every word once."""
    return [(start, end) for start, end, _ in _counted_window_spans(text, max_words, bounded=False)]


def _counted_window_spans(text: str, max_words: int, bounded: bool) -> list[tuple[int, int, int]]:
    """`window_spans`, each with its word count; `bounded` (`scored_windows`): a word of more than MAX_WORD_CHARS
    characters counts, and is cut, as one a MAX_WORD_CHARS."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    windows: list[tuple[int, int, int]] = []
    current: tuple[int, int] | None = None
    current_words = 0
    for start, end in sentence_spans(text):
        count = word_count(text[start:end], bounded)  # the words _word_spans finds, without a span for each
        if count > max_words:
            words = _word_spans(text, start, end, bounded)
            # Close the open window, then cut the sentence; its last piece may take the sentences that follow.
            if current is not None:
                windows.append((*current, current_words))
            pieces = [words[i: i + max_words] for i in range(0, len(words), max_words)]
            windows.extend((piece[0][0], piece[-1][1], len(piece)) for piece in pieces[:-1])
            current, current_words = (pieces[-1][0][0], pieces[-1][-1][1]), len(pieces[-1])
        elif current is not None and current_words + count <= max_words:
            current, current_words = (current[0], end), current_words + count
        else:
            if current is not None:
                windows.append((*current, current_words))
            current, current_words = (start, end), count
    if current is not None:
        windows.append((*current, current_words))
    return windows


def windows(text: str, max_words: int = MAX_WORDS) -> list[str]:
    """The passages of `text` (see `window_spans`); a text of at most `max_words` words is one passage, unchanged
    but for surrounding whitespace. An empty text has none."""
    if len(text.split()) <= max_words:  # str.split's whitespace is \s's, on every code point; three times faster
        stripped = text.strip()
        return [stripped] if stripped else []
    return [text[start:end] for start, end in window_spans(text, max_words)]


def scored_windows(text: str) -> list[str]:
    """The passages `PassageIndex` scores `text` by: its `windows`, but that one of fewer than `MIN_SCORED_WORDS`
    words joins the one before it. BM25 favours short passages (its length normalization), so a page's 10-word tail
    holding a query word outscored its argument: MaxP's known bias. Joined, on the 536 dev web pages (a local corpus,
    46 topics) BM25's judged-only nDCG@5 on the 2021 topics rose 0.564 -> 0.595 (2 of 15 topics up, none down), the
    2020 and the 2022 passages' stayed (0.568; 0.499 -> 0.500). The stages' windows keep the bound: they are read
    by an encoder of 256 word pieces, BM25 has none. Its windows are `bounded` in characters too (MAX_WORD_CHARS);
    the stages' are not: a window of a tag list alone, read, pulled the document's features down. A short first
    window stays alone (37 of tira-input's 197 cut documents open so): joined to the next, no figure moved."""
    if word_count(text, bounded=True) <= MAX_WORDS:
        stripped = text.strip()
        return [stripped] if stripped else []
    spans: list[tuple[int, int]] = []
    for start, end, count in _counted_window_spans(text, MAX_WORDS, True):
        if spans and count < MIN_SCORED_WORDS:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return [text[start:end] for start, end in spans]


class PassageIndex:
    """BM25 over a corpus's passages, each document scored by its best one (MaxP, Dai and Callan, SIGIR 2019).

    A document of at most `MAX_WORDS` words is one passage and scores as whole-document BM25 scored it; a longer
    one is cut into windows of up to MAX_WORDS words (`scored_windows`), as the later stages cut a document the
    encoder cannot read whole into windows of READ_WORDS (they ask the encoder's word pieces, not words). Scored
    whole, a 5,000-word page holding a 200-word argument lost to BM25's length normalization: of 96 judged 2022
    passages set near the start of such pages (cut at 20,000 characters), 72 were in the top 100 of their topic (96
    of 96 alone); by their best passage 89. Rows of the lexical index are passages; `starts` holds each document's
    first row, in corpus order.
    """

    STARTS = "passage_starts.npy"
    # How documents become rows, in a cache entry's complete mark: raised when the same corpus is cut otherwise
    # (2: short windows joined, words bounded in characters), so that a kept entry never scores by the old passages.
    LAYOUT = 2

    def __init__(self, lexical: LexicalIndex, starts: np.ndarray):
        self.lexical, self.starts = lexical, starts

    @property
    def size(self) -> int:
        """The number of documents."""
        return len(self.starts)

    @classmethod
    def build(cls, texts: Iterable[str], progress: bool = False) -> "PassageIndex":
        """Index the passages of `texts` (any iterable, read once)."""
        starts: list[int] = []

        def passages() -> Iterator[str]:
            rows = 0
            for text in texts:
                starts.append(rows)
                cut = scored_windows(text) or [text]  # a text without words is one (empty) passage
                rows += len(cut)
                yield from cut

        lexical = LexicalIndex.build(passages(), progress=progress)
        return cls(lexical, np.array(starts, dtype=np.int64))

    def search(self, queries: list[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query, the top-k documents (their positions in the corpus) and their best passage's BM25 score, best
        first, equal scores in corpus order; documents with score 0 are dropped."""
        k = min(k, self.size)
        results = []
        for query in queries:
            scores = self.lexical.scores(query) if k else np.zeros(0, dtype=np.float32)
            best = np.maximum.reduceat(scores, self.starts) if len(scores) else scores
            results.append(top_rows(best, k))
        return results

    def save(self, directory: str | Path) -> None:
        """Write the lexical index and the documents' first rows into `directory`."""
        self.lexical.save(directory)
        np.save(Path(directory) / self.STARTS, self.starts)

    @classmethod
    def load(cls, directory: str | Path, size: int) -> "PassageIndex":
        """The index `save` wrote for `size` documents; ValueError where its files do not fit together."""
        # Mapped, not read: a header claiming more rows than the file holds is a ValueError, where np.load allocated
        # them first (10**11 rows: a MemoryError, and every later run on the cache ended "out of memory").
        starts = np.load(Path(directory) / cls.STARTS, mmap_mode="r", allow_pickle=False)
        lexical = LexicalIndex.load(directory)
        if (starts.ndim != 1 or len(starts) != size or starts.dtype != np.int64
                or (size and (starts[0] != 0 or starts[-1] >= lexical.size or np.any(np.diff(starts) < 1)))):
            raise ValueError(f"its {cls.STARTS} does not fit its {size} documents")
        return cls(lexical, np.array(starts))  # a copy: a later save replaces the file


@dataclass(frozen=True)
class Passage:
    """What the stages read of a document: its whole text (`span` None) or the window `document[span[0]:span[1]]`.
    `doc_id` is the document's id, and for the second, third, ... text one id has under other topics (a re-rank
    file's query-dependent texts) the id and " #2", " #3", ..., so that each text is read for its own topics."""

    doc_id: str
    document: str
    span: tuple[int, int] | None = None

    @property
    def text(self) -> str:
        return self.document if self.span is None else self.document[self.span[0]: self.span[1]]

    @property
    def key(self) -> str:
        """The passage's id (its embedding's in caches): the document's for a whole document, else the document's
        and the window's span after a space, which no document id holds."""
        return self.doc_id if self.span is None else f"{self.doc_id} {self.span[0]}-{self.span[1]}"


def read_passages(queries: dict[str, str], documents: dict[str, list[Document]],
                  fits: Callable[[list[str]], list[bool]],
                  per_document: int = PER_DOCUMENT) -> dict[str, dict[str, list[Passage]]]:
    """Per topic and document, in text order, the passages the stages read.

    `documents` holds each topic's documents by topic id, `queries` its BM25 query; `fits` tells which texts the
    encoder reads whole. Those are one passage each. Every other document is cut into windows, and one BM25 index
    over the windows of all of them picks, per topic, a document's first window and its `per_document - 1` windows
    of highest score for the topic's query (the earlier window among ties).
    """
    if per_document < 1:
        raise ValueError(f"per_document must be at least 1, got {per_document}")
    keys: dict[tuple[str, str], str] = {}  # (id, text) -> the key the document's passages are read under
    texts_of: Counter = Counter()
    for found in documents.values():
        for document in found:
            if (document.doc_id, document.text) not in keys:
                texts_of[document.doc_id] += 1
                count = texts_of[document.doc_id]
                keys[document.doc_id, document.text] = (document.doc_id if count == 1
                                                         else f"{document.doc_id} #{count}")
    distinct = {keys[document.doc_id, document.text]: document for found in documents.values() for document in found}
    whole = dict(zip(distinct, fits([document.text for document in distinct.values()])))
    spans = {key: window_spans(distinct[key].text, READ_WORDS) for key, fit in whole.items() if not fit}
    first_row, texts = {}, []
    for key, doc_spans in spans.items():
        first_row[key] = len(texts)
        texts.extend(distinct[key].text[start:end] for start, end in doc_spans)
    index = LexicalIndex.build(texts) if texts else None
    passages = {}
    for qid, found in documents.items():
        scores = index.scores(queries[qid]) if index is not None else None
        passages[qid] = {}
        for document in found:
            key = keys[document.doc_id, document.text]
            if whole[key]:
                passages[qid][document.doc_id] = [Passage(key, document.text)]
                continue
            doc_spans, row = spans[key], first_row[key]
            chosen = _first_and_best(scores[row: row + len(doc_spans)], per_document)
            passages[qid][document.doc_id] = [Passage(key, document.text, doc_spans[i]) for i in chosen]
    return passages


def _first_and_best(scores: np.ndarray, k: int) -> list[int]:
    """Window 0 and the k - 1 other windows of highest score (stable among ties), in text order."""
    best = np.argsort(-scores[1:], kind="stable")[: k - 1] + 1
    return [0, *sorted(best.tolist())]
