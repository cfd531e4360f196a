"""Argument quality: how well a text argues, as a score in [0, 1].

Touché judges every document for quality ("well-writtenness": is it an argument, is it well formed, free of
profanity and typos) besides relevance; 2020-21 Task 1 even labels spam and non-arguments -2. No such model is
installable, so we train a small head here (``python -m app.training.quality``) on two signals:

* hand-made text statistics (:func:`text_features`) that separate prose from navigation menus, listings,
  markup and spam, and
* the all-MiniLM-L6-v2 embedding the pipeline computes anyway for dense relevance.

The head is a linear model over both (standardised features ++ embedding) with a sigmoid, stored as a small
``.npz`` in ``app/models/`` and loaded with :meth:`QualityModel.load`.
"""

from __future__ import annotations

import logging
import re
from itertools import chain, repeat

import numpy as np

from app.heads import LinearHead
from app.settings import MODELS_DIR

log = logging.getLogger(__name__)

DEFAULT_MODEL_PATH = MODELS_DIR / "quality.npz"


_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]+(?=\s|$)")  # each run from its start: "!" x 20,000 + "a" in linear time
_DIGIT = re.compile(r"\d")
_SYMBOL = re.compile(r"[^\w\s.,;:'\"!?()\-\u2019\u201c\u201d]")
_MARKUP = re.compile(r"<[^>]{0,200}>|&[a-z]+;|[|{}\[\]]|\s[>»«›•·]\s")
_URL = re.compile(r"https?://|www\.|\.(?:com|org|net|html?|php)\b", re.IGNORECASE)
_REPEATED_PUNCTUATION = re.compile(r"[!?]{2,}|\.{4,}")
_LOWER_SENTENCE_START = re.compile(r"[.!?]\s+[a-z]")
_LOWER_I = re.compile(r"(?:^|\s)i(?=[\s,.'])")
_GLUED = re.compile(r"[a-z][.,;:!?][A-Za-z]|[a-z][A-Z][a-z]")
_LONG_TOKEN = re.compile(r"\b\w{20,}\b")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")

# Word classes counted per word. They are disjoint, so one dictionary look-up per token classifies it.
WORD_CLASSES: dict[str, str] = {
    "function_words": "the a an of to in and or is are was were be been it that this these those with for on as "
                      "at by not but if so then there which who what when can could would should will do does "
                      "have has had they their its from about into most very also just only",
    "argument_markers": "because therefore however thus hence although though since consequently whereas "
                        "moreover furthermore nevertheless instead indeed due result addition example instance "
                        "opinion think believe fact evidence reason reasons argue argument conclude clearly "
                        "obviously whether unless despite",
    "comparative_markers": "better worse best worst more less than prefer prefers preferred advantage advantages "
                           "disadvantage disadvantages pros cons compared comparison versus vs superior inferior "
                           "faster slower cheaper healthier safer easier harder",
    "first_person": "i me my mine we us our ours",
    "second_person": "you your yours u ur",
    "profanity": "fuck fucking fucked fucker shit shitty bullshit crap crappy damn dammit ass asshole bitch "
                 "bastard dick piss pissed cunt whore slut retard retarded idiot idiots stupid moron morons dumb "
                 "suck sucks wtf lol lmao omg stfu",
    "boilerplate": "login signin signup register subscribe subscription copyright rights reserved privacy cookie "
                   "cookies click menu home contact share tweet facebook twitter pinterest posted reply comments "
                   "advertisement advertise download shipping price cart buy shop sale newsletter email password "
                   "search terms sitemap skip navigation next previous page related tags archive rss",
}
_CLASS_NAMES = tuple(WORD_CLASSES)
_LEXICON = {word: i + 1 for i, words in enumerate(WORD_CLASSES.values()) for word in words.split()}

FEATURE_NAMES: tuple[str, ...] = (
    "log_words", "log_sentences", "log_words_per_sentence", "capitalised", "all_caps", "function_words",
    "digits", "alpha", "symbols", "markup", "urls", "questions_per_sentence", "exclamations_per_sentence",
    "repeated_punctuation", "lower_sentence_starts", "lower_i", "glued_tokens", "long_tokens", "non_ascii",
    "argument_markers", "comparative_markers", "first_person", "second_person", "profanity", "boilerplate",
    "type_token_ratio", "mean_word_length", "question_only",
)


def _count(pattern: re.Pattern, texts: list[str]) -> np.ndarray:
    return np.fromiter((len(pattern.findall(t)) for t in texts), dtype=np.float64, count=len(texts))


def _per_text(function, items) -> np.ndarray:
    return np.fromiter(map(function, items), dtype=np.float64)


def _word_class_counts(lowered: list[list[str]]) -> np.ndarray:
    """Tokens of each :data:`WORD_CLASSES` class per text: one dict look-up per token, summed by numpy."""
    lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
    total = int(lengths.sum())
    classes = np.fromiter(map(_LEXICON.get, chain.from_iterable(lowered), repeat(0, total)), dtype=np.int64,
                          count=total)
    rows = np.repeat(np.arange(len(lowered)), lengths)
    n = len(_CLASS_NAMES) + 1
    counts = np.bincount(rows * n + classes, minlength=len(lowered) * n).reshape(len(lowered), n)
    return counts[:, 1:].astype(np.float64)


# Texts whose statistics are counted together: their word lists take about 24 bytes a character meanwhile, so 256
# texts of 100,000 characters (a web page's bound) about 600 MB at most, where 100,000 pages at once took gigabytes.
FEATURE_BATCH = 256


def text_features(texts: list[str]) -> np.ndarray:
    """Hand-made statistics of each text, one row per text (float32, columns in :data:`FEATURE_NAMES`).

    Counts come from compiled regular expressions, C-level string methods and one dictionary look-up per
    token, turned into rates with numpy: about 0.3 ms per passage, so the 868k-passage Touché corpus takes
    minutes. Rates are per word, sentence or character, so they do not grow with length; length itself is
    one feature (log).
    """
    texts = [t or "" for t in texts]
    if not texts:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    distinct = dict.fromkeys(texts)
    if len(distinct) < len(texts):  # e.g. one document's statistics for each of its passages: measured once
        rows = {text: row for row, text in enumerate(distinct)}
        return text_features(list(distinct))[[rows[text] for text in texts]]
    if len(texts) > FEATURE_BATCH:  # the word lists of a batch at a time: 24 bytes a character while counted
        return np.concatenate([text_features(texts[start:start + FEATURE_BATCH])
                               for start in range(0, len(texts), FEATURE_BATCH)])
    chars = np.maximum(_per_text(len, texts), 1.0)
    word_lists = [_WORD.findall(t) for t in texts]
    lowered = [" ".join(words).lower().split() for words in word_lists]
    n_words = _per_text(len, word_lists)
    words = np.maximum(n_words, 1.0)
    word_chars = _per_text(lambda ws: sum(map(len, ws)), word_lists)
    n_sentences = _count(_SENTENCE_END, texts)
    sentences = np.maximum(n_sentences, 1.0)
    questions = _per_text(lambda t: t.count("?"), texts)
    digits = _count(_DIGIT, texts)
    classes = dict(zip(_CLASS_NAMES, (_word_class_counts(lowered) / words[:, None]).T))
    per_word = {name: _count(pattern, texts) / words for name, pattern in (
        ("markup", _MARKUP), ("urls", _URL), ("lower_i", _LOWER_I), ("glued_tokens", _GLUED),
        ("long_tokens", _LONG_TOKEN), ("repeated_punctuation", _REPEATED_PUNCTUATION))}
    columns = {
        "log_words": np.log1p(n_words),
        "log_sentences": np.log1p(n_sentences),
        "log_words_per_sentence": np.log1p(n_words / sentences),
        "capitalised": _per_text(lambda ws: sum(map(str.istitle, ws)), word_lists) / words,
        "all_caps": _per_text(lambda ws: sum(map(str.isupper, ws)), word_lists) / words,
        "digits": digits / chars,
        "alpha": np.maximum(word_chars - digits, 0.0) / chars,
        "symbols": _count(_SYMBOL, texts) / chars,
        "non_ascii": _count(_NON_ASCII, texts) / chars,
        "questions_per_sentence": np.minimum(questions / sentences, 1.0),
        "exclamations_per_sentence": np.minimum(_per_text(lambda t: t.count("!"), texts) / sentences, 1.0),
        "lower_sentence_starts": _count(_LOWER_SENTENCE_START, texts) / sentences,
        # short texts always have a high type/token ratio; the length-normalised variant (Guiraud's R) does not
        "type_token_ratio": _per_text(lambda ws: len(set(ws)), lowered) / np.sqrt(words),
        "mean_word_length": word_chars / words,
        "question_only": ((questions > 0) & (questions >= n_sentences)).astype(np.float64),
        **classes, **per_word,
    }
    return np.stack([columns[name] for name in FEATURE_NAMES], axis=1).astype(np.float32)


class QualityModel(LinearHead):
    """The argument-quality head over :func:`text_features` and MiniLM embeddings; trained by
    ``app.training.quality``."""

    NAME = "quality"
    FEATURE_NAMES = FEATURE_NAMES
    DEFAULT_PATH = DEFAULT_MODEL_PATH
    TRAINER = "quality"

    def logits(self, texts: list[str], embeddings: np.ndarray | None = None) -> np.ndarray:
        """The head's raw scores; :meth:`score` squashes them into [0, 1]."""
        if self.uses_embeddings and texts and embeddings is None:
            from app.encoder import encode

            embeddings = encode(texts)
        return self.linear(text_features(texts), embeddings)

    def score(self, texts: list[str], embeddings: np.ndarray | None = None) -> np.ndarray:
        """Quality of each text in [0, 1]; pass `embeddings` (app.encoder.encode rows) to avoid re-encoding."""
        return self.squash(self.logits(texts, embeddings))
