"""How the ranking signals combine into one score: a weighted sum of per-topic features.

Features (each a per-candidate array):
- lexical: the first stage's score (BM25's, ChatNoir's, the re-rank file's, or where it gives none its order's
  own, `records.scores_or_order`) divided by the largest absolute score among the topic's reranked candidates,
  negative scores mapped onto [0, 1] (`lexical_feature`);
- dense: cosine similarity of the topic's title and the passage under all-MiniLM-L6-v2;
- length: a saturating log prior on the word count. Dense models prefer short, non-argumentative text
  (BEIR Touché; Thakur et al., SIGIR 2024); arguments need room, so very short texts are pushed down;
- quality: the argument-quality model's score in [0, 1] (app.quality);
- relevance: the relevance head's score in [0, 1] (app.relevance).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from .records import Candidate

LENGTH_SATURATION_WORDS = 150
# A document read as several passages (app.passages) takes the mean of each feature over its best passages by
# fused score; a document read whole is its one passage.
DOCUMENT_PASSAGES = 2


@dataclass(frozen=True)
class FusionWeights:
    lexical: float
    dense: float
    length: float
    quality: float = 0.0
    relevance: float = 0.0


# Found by `python -m app.training.fusion --cache-dir /tmp/relevance-cache` (seed 13): 5-fold topic-held-out
# cross-validation on the 25 dev topics of Touché 2022 Task 2 (tira-input passages), the quality and relevance
# heads retrained without each fold's topics, maximising the mean of judged-only relevance and quality nDCG@5
# (qrels restricted to the passages in tira-input). Best on all topics and picked by 3 of the 5 folds; held-out
# relevance 0.825 / quality 0.854 (all dev qrels: 0.722 / 0.698), against 0.788 / 0.864 without the relevance
# head (dense 1, length 0.3, quality 3). The relevance head already holds the MiniLM cosines and BM25, so their
# own weights went to 0.
WEIGHTS = FusionWeights(lexical=0.0, dense=0.0, length=0.5, quality=0.5, relevance=0.5)


# A word of a text's length: a run of non-space characters holding a letter or digit ("_" alone is none, though
# \w). Matched from the run's start only (the lookbehind): r"\S*\w\S*" retried at every character of a run without
# one, 30,000 dots took 5.5 s and 100,000 (a reranked text's limit) about a minute.
_COUNTED_WORD = re.compile(r"(?<!\S)(?:[^\s\w]|_)*[^\W_]\S*")


def counted_words(text: str) -> int:
    """A text's length in words for `length_prior` and the relevance head: its runs of non-space characters that
    hold a letter or digit. Counted by str.split, ". . ." and "- | -" were words: a topic's title followed by 150
    " ." (300 characters) had the length of a 150-word passage and ranked first in 2 of 4 dev topics, above every
    judged passage (a helper's attack)."""
    return len(_COUNTED_WORD.findall(text))


def training_words(text: str) -> int:
    """A dev passage's length in words as the shipped relevance head and fusion weights were fitted on it: its
    str.split words. Fitted on `counted_words` instead, the relevance head's topic-held-out CV fell 0.797 -> 0.787
    and the fusion's 0.825 / 0.854 -> 0.817 / 0.862 (relevance / quality; within noise, not better), so the heads
    keep the counts they were fitted on and a retrain reproduces them; runs count by `counted_words`, which differs
    only on runs without a letter or digit (tira-input's run 0.878 / 0.882 -> 0.881 / 0.881)."""
    return len(text.split())


def length_prior(word_counts: np.ndarray) -> np.ndarray:
    """log(1 + words) / log(1 + 150), capped at 1: 0 for an empty text, 1 from 150 words on."""
    counts = np.asarray(word_counts, dtype=np.float32)
    return np.minimum(np.log1p(counts) / np.log1p(LENGTH_SATURATION_WORDS), 1.0)


def lexical_feature(scores: np.ndarray, head: int | None = None) -> np.ndarray:
    """A topic's first-stage scores as the `lexical` feature, in [0, 1]: divided by the largest absolute one among
    the first `head` (the reranked ones; all by default).

    Where those go below 0 (log-probabilities, negated distances) they are mapped onto [0, 1] instead, their lowest
    at 0 and their best at 1: read as they were, in [-1, -0.77], they lay outside the BM25 scores the relevance head
    learned. On the 2022 dev topics BM25's scores made log-probability-like (s - max - 1) then rank as BM25's do
    (`scripts/negative_scores.py`). The reranked scores alone set the mapping, and the tail's are clipped into
    [0, 1], so the reranked ones' feature does not depend on how deep the first stage went (`--candidates`: mapped
    by every candidate's lowest score, the order of a top two turned); they are scaled before they are shifted, so no
    finite score overflows (1e308 and -1e308 gave NaN)."""
    scores = np.asarray(scores, dtype=np.float64)
    reranked = scores[:head]
    if not len(reranked):
        return np.zeros(len(scores))
    top = np.abs(reranked).max()
    with np.errstate(over="ignore"):  # a tail score past the head's by 1e308 times is clipped to 1
        scaled = scores / top if top > 0 else scores.copy()
        lowest, best = scaled[:head].min(), scaled[:head].max()
        if lowest < 0:
            scaled = (scaled - lowest) / (best - lowest) if best > lowest else (scaled >= lowest).astype(np.float64)
    return np.clip(scaled, 0.0, 1.0)


def padded(head: np.ndarray, size: int) -> np.ndarray:
    """A feature of the reranked head, then the head's minimum for the `size - len(head)` candidates below it: with
    non-negative weights they fuse below the head, in first-stage order."""
    return np.concatenate([head, np.full(size - len(head), head.min() if len(head) else 0.0, dtype=head.dtype)])


def features(lexical: np.ndarray, head: dict[str, np.ndarray],
             copies: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """A topic's fusion features, as a run and the weights' tuning both build them: `lexical` (`lexical_feature`)
    for every candidate, and each feature of the reranked `head` (dense, length, quality, relevance) `padded` to as
    many; with `copies` (`first_copies` of the head's texts) each copy of a text takes its first one's features."""
    if copies is not None:
        head = {name: values[copies] for name, values in head.items()}
    return {"lexical": lexical, **{name: padded(values, len(lexical)) for name, values in head.items()}}


def first_copies(texts: list[str]) -> np.ndarray:
    """Each text's first copy among `texts` (by position; whitespace aside), so that copies (mirrors; one error page
    served for every page) are scored and read as their first, best-ranked occurrence: they tie and keep the first
    stage's order. Scored apart they differed only by the first-stage score, which the relevance head weighs
    slightly below zero: ChatNoir's order among pages of one text came out reversed."""
    first: dict[str, int] = {}
    return np.array([first.setdefault(" ".join(text.split()), row) for row, text in enumerate(texts)],
                    dtype=np.int64)


def fuse(features: dict[str, np.ndarray], weights: FusionWeights = WEIGHTS) -> np.ndarray:
    """The weighted sum of the features present (a missing feature contributes nothing)."""
    total = None
    for name, weight in asdict(weights).items():
        if weight and name in features:
            term = weight * np.asarray(features[name], dtype=np.float64)
            total = term if total is None else total + term
    if total is None:
        raise ValueError("no weighted feature to fuse")
    return total


def aggregate(features: dict[str, np.ndarray], documents: list[np.ndarray], weights: FusionWeights = WEIGHTS,
              top: int = DOCUMENT_PASSAGES) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Document features from passage features (rows), and each document's best passages.

    `documents` lists each document's passage rows. A document's feature is the mean over its `top` passages of
    highest fused score (the earlier passage among ties), which are its best passages, best first; a document of
    one passage has that passage's features, exactly.
    """
    fused = fuse(features, weights)
    best = [rows[np.argsort(-fused[rows], kind="stable")[:top]] for rows in documents]
    aggregated = {name: np.array([values[rows].mean(dtype=np.float64) for rows in best]).astype(values.dtype)
                  for name, values in features.items()}
    return aggregated, best


class Ranking(NamedTuple):
    """A topic's document ids and their fused scores, best first."""

    doc_ids: list[str]
    scores: list[float]


def rank(found: list[Candidate], scores: np.ndarray, depth: int) -> Ranking:
    """A topic's document ids and fused scores, best first, cut at `depth`.

    Ties keep the first-stage order: the tail below the rerank depth shares one fused score and so stays in the
    first stage's order (BM25's, ChatNoir's or the re-rank file's).
    """
    order = sorted(range(len(found)), key=lambda i: -scores[i])[:depth]
    return Ranking([found[i].doc.doc_id for i in order], [float(scores[i]) for i in order])
