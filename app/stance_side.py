"""Which of two objects a sentence favours, read from its words around the objects' mentions.

The comparative head of `app.stance` sees the passage embedding, which is the same whichever object comes first,
so only object-aware features can tell FIRST from SECOND; issue 12 found its hand-made ones too weak (the side
decision was where the head failed). This model is a logistic regression over the word 1-3-grams of a sentence
whose mentions of the two objects are replaced by two marker words, so "[first] is faster than [second]" and
"[second] is faster than [first]" are different inputs. It is trained on CompSent-19 (Panchenko et al., ArgMining
2019: 7,199 sentences naming two objects, BETTER / WORSE / NONE; no licence stated, research data), each sentence
also with its objects swapped (and BETTER / WORSE with them), by `python -m app.training.stance`, and shipped in
`app/models/stance.npz` beside the heads. `passage_features` turns its sentence probabilities into the head's
side features.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import cached_property
from itertools import accumulate

import numpy as np
from scipy.special import softmax

from app.passages import sentence_spans

LABELS = ("FIRST", "SECOND", "NONE")
FIRST_MARK, SECOND_MARK = "objectfirst", "objectsecond"
_SWAPPED_MARKS = {FIRST_MARK: SECOND_MARK, SECOND_MARK: FIRST_MARK}
_MARKS = re.compile(rf"\b(?:{FIRST_MARK}|{SECOND_MARK})\b")
NGRAMS = 3
TOKEN_PATTERN = r"(?u)\b\w+\b"  # one-letter words kept: "a", "i" carry no side, but "c" (the language) may
FEATURE_NAMES = ("side_first_sum", "side_second_sum", "side_first_max", "side_second_max")

SpanList = list[tuple[int, int]]


def within(spans: SpanList, start: int, end: int) -> SpanList:
    """The spans (sorted by start, as `find_mentions` gives them) that start in [start, end), shifted to start
    there: found by bisection, so a text of many sentences and mentions costs no product of the two."""
    first = bisect_left(spans, start, key=lambda span: span[0])
    last = bisect_left(spans, end, lo=first, key=lambda span: span[0])
    return [(s - start, e - start) for s, e in spans[first:last]]


def furthest_ends(spans: SpanList) -> list[int]:
    """furthest[i]: the furthest end among spans[:i + 1] (sorted by start), for bisection on their starts."""
    return list(accumulate((end for _, end in spans), max))


def _apart(spans: SpanList, others: SpanList) -> SpanList:
    """The spans that overlap none of `others` (both sorted by start), by bisection on the others' starts."""
    reach = furthest_ends(others)
    kept = []
    for s, e in spans:
        before = bisect_left(others, e, key=lambda span: span[0])  # the others that start before this one ends
        if before == 0 or reach[before - 1] <= s:
            kept.append((s, e))
    return kept


def masked(text: str, spans_first: SpanList, spans_second: SpanList) -> str:
    """The text with the first object's mentions replaced by FIRST_MARK and the second's by SECOND_MARK.

    A mention overlapping one of the other object ("Windows" in "Windows 7" vs "Windows 8") is left as it is, for
    both objects alike, so that swapping the objects only swaps the markers."""
    spans = sorted([(s, e, FIRST_MARK) for s, e in _apart(spans_first, spans_second)]
                   + [(s, e, SECOND_MARK) for s, e in _apart(spans_second, spans_first)])
    out, at = [], 0
    for start, end, token in spans:
        if start < at:  # overlapping mentions of one object: the first is replaced
            continue
        out += [text[at:start], f" {token} "]
        at = end
    out.append(text[at:])
    return "".join(out)


def both_object_sentences(text: str, spans_first: SpanList, spans_second: SpanList) -> list[str]:
    """The `masked` sentences of a text (`app.passages.sentence_spans`) that name both objects."""
    result = []
    for start, end in sentence_spans(text):
        first, second = within(spans_first, start, end), within(spans_second, start, end)
        if first and second:
            result.append(masked(text[start:end], first, second))
    return result


class SideModel:
    """softmax(binary n-gram counts @ weights + bias) over LABELS, for sentences already `masked`."""

    def __init__(self, vocabulary: Sequence[str], weights: np.ndarray, bias: np.ndarray):
        self.vocabulary = list(vocabulary)
        self.weights = np.asarray(weights, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)

    @cached_property
    def vectorizer(self):
        from sklearn.feature_extraction.text import CountVectorizer

        return CountVectorizer(vocabulary=self.vocabulary, ngram_range=(1, NGRAMS), binary=True,
                               token_pattern=TOKEN_PATTERN, dtype=np.float32)

    def probabilities(self, sentences: Sequence[str]) -> np.ndarray:
        """LABELS probabilities of masked sentences, averaged with those of the sentence with its markers swapped
        (FIRST and SECOND exchanged), so that swapping the objects swaps the sides exactly, not only up to the
        solver's tolerance."""
        if not sentences:
            return np.zeros((0, len(LABELS)), np.float32)
        mirrored = [_MARKS.sub(lambda m: _SWAPPED_MARKS[m.group()], sentence) for sentence in sentences]
        return (self._softmax(sentences) + self._softmax(mirrored)[:, [1, 0, 2]]) / 2

    def _softmax(self, sentences: Sequence[str]) -> np.ndarray:
        return softmax(np.asarray(self.vectorizer.transform(sentences) @ self.weights) + self.bias, axis=1)

    def passage_features(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """Per passage (its masked sentences naming both objects): the sum (log1p) and the maximum of the
        sentences' FIRST and SECOND probabilities; zeros for a passage without such a sentence."""
        rows = np.zeros((len(sentences), len(FEATURE_NAMES)), np.float32)
        flat = [sentence for group in sentences for sentence in group]
        probabilities = self.probabilities(flat)
        at = 0
        for i, group in enumerate(sentences):
            if group:
                part = probabilities[at:at + len(group), :2]
                rows[i] = np.concatenate([np.log1p(part.sum(axis=0)), part.max(axis=0)])
            at += len(group)
        return rows

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}_vocabulary": np.asarray(self.vocabulary), f"{prefix}_weights": self.weights.astype(
            np.float16), f"{prefix}_bias": self.bias}

    @classmethod
    def from_arrays(cls, arrays, prefix: str) -> "SideModel":
        return cls(arrays[f"{prefix}_vocabulary"].tolist(), arrays[f"{prefix}_weights"], arrays[f"{prefix}_bias"])
