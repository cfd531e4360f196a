"""Stance of a document toward a topic, for comparative and controversial topics, behind one interface.

Comparative topics (Touché 2022 Task 2) get FIRST / SECOND / NEUTRAL / NO toward the two objects; controversial
topics (Touché 2023 Task 1, args.me) get PRO / CON / NEU / NO toward the topic's question. Both heads are linear
classifiers on frozen all-MiniLM-L6-v2 embeddings, trained by `python -m app.training.stance` and shipped as one
small `.npz` file:

- comparative: the passage embedding, object-aware lexical features around the mentions of the two objects
  (comparative words, "A ... better than ... B" patterns, who is praised alone) and the passage's similarity to
  each of the topic's queries (title, description, narrative: the run's relevance queries, so no extra encode),
  and the side model's (`app.stance_side`, trained on CompSent-19) reading of the sentences naming both objects.
  Each passage is read with the objects in both orders (`symmetric_probabilities`), and a side is named only where
  the head can tell which (`decode_comparative`). Embedding the passage with the
  objects masked by marker words scored lower in cross-validation (0.39 vs 0.44 macro-F1) and costs an extra
  encode, so it is not used. No extra encode per passage.
- controversial: the document embedding signed by the topic's polarity (-1 for topics against their target, "Should
  X be banned?", from a word rule), its element-wise product with the topic's, and their similarity; PRO / CON /
  NO (NO learnt from texts paired with unrelated topics); NEU, where the head takes a side, when the neutral head
  (trained on VAST's neutral comments against its sided ones) says so, or, for a model without one, when PRO and
  CON are within `neutral_margin`. The
  signed embedding lets the head learn the document's sentiment once for both kinds of topic: IBM Claim Stance
  test accuracy 0.52 without it, see the artefact's metrics with it. No extra encode per document.

The heads label every reranked document. On controversial topics the top of a ranking (`cross_depth`) is also
read by a stance cross-encoder (`app.stance_cross`), which sees question and passage together and decides PRO or
CON: see `StanceModel.predict`.
"""

from __future__ import annotations

import json
import logging
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.special import expit, softmax

from app import debates
from app.errors import ToucheError
from app.files import atomic_file
from app.heads import check_finite
from app.records import FUNCTION_WORDS, QUESTION_WORDS, StancePrediction, Topic
from app.relevance import QUERY_NAMES, topic_queries
from app.stance_side import FEATURE_NAMES as SIDE_FEATURE_NAMES
from app.stance_side import SideModel, SpanList, both_object_sentences, furthest_ends, within
from app.settings import MODELS_DIR

log = logging.getLogger(__name__)

NEUTRAL_LABELS = ("SIDED", "NEU")  # the neutral head's (StanceModel.neutral)
# A comparative label's counterpart when the question names the objects the other way round.
SWAPPED = {"FIRST": "SECOND", "SECOND": "FIRST", "NEUTRAL": "NEUTRAL", "NO": "NO", "NONE": "NONE"}
TASKS = ("comparative", "controversial")
DEFAULT_MODEL = MODELS_DIR / "stance.npz"

POSITIVE_WORDS = frozenset("""
better best faster fastest superior prefer prefers preferred preferable recommend recommended easier easiest
cheaper cheapest stronger safer healthier smarter nicer superb excellent great greater win wins winner beats
outperforms advantage advantages pros favour favor favorite favourite love quicker reliable powerful
""".split())
NEGATIVE_WORDS = frozenset("""
worse worst slower slowest inferior harder weaker expensive pricier disadvantage disadvantages cons lacks lack
problem problems hate avoid bad poor poorer loses lose fails unreliable overpriced riskier
""".split())
# FIRST and SECOND closer than this: the head cannot tell the side (see decode_comparative). Fixed before measuring
# it on the head of the time (title cosine only): leave-topics-out dev macro-F1 over 5 fold splits 0.405 +- 0.021,
# against 0.400 +- 0.026 for the plain argmax, which also moved by up to 0.009 per split with 1e-7 float noise.
SIDE_TIE = 1e-3
_WORD = re.compile(r"[A-Za-z']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

# Words a text holds in lowercase that an object written in capitals may spell (`find_mentions`).
_COMMON_WORDS = FUNCTION_WORDS | QUESTION_WORDS | frozenset(
    "us me am so up go if he she they them him her his its all any one may now new use but out".split())


def task_kind(topics: list[Topic], override: str | None = None,
              comparative: Callable[[Topic], bool] | None = None, stated: bool = False) -> str:
    """Say which stance labels a run needs: "comparative" or "controversial".

    An explicit `override` (the CLI's `--task`) wins. Otherwise the topics are comparative when any of them names
    two objects; else controversial where the documents state PRO / CON stances (`stated`: args.me's debate portals,
    Touché's controversial Task 1); else comparative when, given, the `comparative` predicate (e.g. a question
    classifier) says so for at least half of them: 48 of the 50 titles of 2020/21 Task 2 read as comparative, 4 of
    2021 Task 1's controversial ones too ("Is communism better than democracy?"), and one label set serves a whole
    run (a run of one such topic on args.me was comparative).
    """
    if override is not None:
        if override not in TASKS:
            raise ToucheError(f"unknown task {override!r}: choose one of {', '.join(TASKS)}")
        return override
    if any(topic.objects is not None for topic in topics):
        return "comparative"
    if stated:
        return "controversial"
    if comparative is not None and topics and 2 * sum(map(comparative, topics)) >= len(topics):
        return "comparative"
    return "controversial"


def balance_stance(labels: list[str], k: int = 10, pool: int | None = None) -> list[int]:
    """Reorder a ranking so that its top `k` alternates between the two sides; returns a permutation of indices.

    `labels` are the stances in ranked order. Pro documents are PRO or FIRST, con documents CON or SECOND; any
    other label is neutral. The top `k` slots are filled one by one: the next slot takes the highest-ranked
    document not yet placed, unless it has the same side as the last sided document placed and a document of the
    other side is waiting within the first `pool` positions (default `2 * k`); then the best-ranked waiting
    document of the other side moves up into the slot. Each side keeps its internal order and neutral documents
    keep theirs; after the top `k`, the remaining documents follow in their original order.
    """
    pool = 2 * k if pool is None else pool
    sides = [_side(label) for label in labels]
    placed: list[int] = []
    taken = [False] * len(labels)
    last_side = None
    for _ in range(min(k, len(labels))):
        best = next(i for i, done in enumerate(taken) if not done)
        if sides[best] is not None and sides[best] == last_side:
            other = next((i for i in range(min(pool, len(labels)))
                          if not taken[i] and sides[i] is not None and sides[i] != last_side), None)
            if other is not None:
                best = other
        taken[best] = True
        placed.append(best)
        if sides[best] is not None:
            last_side = sides[best]
    return placed + [i for i, done in enumerate(taken) if not done]


def _side(label: str) -> str | None:
    if label in ("PRO", "FIRST"):
        return "pro"
    if label in ("CON", "SECOND"):
        return "con"
    return None


def find_mentions(text: str, obj: str) -> SpanList:
    """Character spans of an object's mentions: whole words, any case, optional plural `s`/`es`. An object in
    capitals that spells a common word ("US", "IT", "WHO") is found in capitals only: "Tell us ..." named the US."""
    obj = obj.strip()
    if not obj:
        return []
    pattern = r"(?<![\w])" + re.escape(obj) + r"(?:e?s)?(?![\w])"
    flags = 0 if obj.isupper() and obj.lower() in _COMMON_WORDS else re.IGNORECASE
    return [match.span() for match in re.finditer(pattern, text, flags=flags)]


def object_mentions(text: str, objects: tuple[str, str]) -> tuple[SpanList, SpanList]:
    """Each object's mentions (`find_mentions`), less those inside a longer mention of the other: "C" in "C++",
    "Windows" in "Windows 10", "tea" in "green tea" name only the other object (a text about C++ alone named both,
    and its sides tied)."""
    first, second = find_mentions(text, objects[0]), find_mentions(text, objects[1])
    return _outside(first, second), _outside(second, first)


def _outside(spans: SpanList, others: SpanList) -> SpanList:
    """The spans that lie within no longer one of `others` (both sorted by start), by bisection on their starts; a
    span both give ("cars" of "car" and "cars") stays each one's."""
    same = set(spans)
    others = [span for span in others if span not in same]
    reach, starts = furthest_ends(others), [start for start, _ in others]
    return [(s, e) for s, e in spans if not ((before := bisect_right(starts, s)) and reach[before - 1] >= e)]


def lexical_features(text: str, spans_first: SpanList, spans_second: SpanList) -> np.ndarray:
    """Hand-made features around the object mentions: per object, then shared ones (see FEATURE_NAMES)."""
    per_object = [[0.0] * 5 for _ in range(2)]
    length = max(len(text), 1)
    for role, spans in enumerate((spans_first, spans_second)):
        per_object[role][0] = np.log1p(len(spans))
        per_object[role][1] = spans[0][0] / length if spans else 1.0
    positive = negative = 0
    for start, sentence in _sentences(text):
        end = start + len(sentence)
        inside = [[s for s, _ in within(spans, start, end)] for spans in (spans_first, spans_second)]
        words = [(m.start(), m.group().lower()) for m in _WORD.finditer(sentence)]
        pos = [at for at, word in words if word in POSITIVE_WORDS]
        neg = [at for at, word in words if word in NEGATIVE_WORDS]
        positive, negative = positive + len(pos), negative + len(neg)
        for role in (0, 1):
            if inside[role] and not inside[1 - role]:
                per_object[role][2] += len(pos)
                per_object[role][3] += len(neg)
        if inside[0] and inside[1]:
            # "A ... better ... B" favours A, "A ... worse ... B" favours B (and mirrored for B before A).
            for role in (0, 1):
                first_at, other_at = inside[role][0], inside[1 - role][-1]
                if first_at < other_at:
                    per_object[role][4] += sum(first_at < at < other_at for at in pos)
                    per_object[1 - role][4] += sum(first_at < at < other_at for at in neg)
    for role in (0, 1):
        for column in (2, 3, 4):
            per_object[role][column] = np.log1p(per_object[role][column])
    both = float(bool(spans_first) and bool(spans_second))
    neither = float(not spans_first and not spans_second)
    shared = [np.log1p(length) / 8.0, both, neither, np.log1p(positive), np.log1p(negative),
              np.log1p(text.lower().count(" than ")), np.log1p(text.count("?"))]
    return np.asarray(per_object[0] + per_object[1] + shared, dtype=np.float32)


FEATURE_NAMES = tuple(f"{role}_{name}" for role in ("first", "second")
                      for name in ("mentions", "first_position", "alone_positive", "alone_negative", "favoured")
                      ) + ("length", "both", "neither", "positive", "negative", "than", "questions")


def _sentences(text: str):
    start = 0
    for piece in _SENTENCE.split(text):
        at = text.find(piece, start)
        yield at, piece
        start = at + len(piece)


def comparative_lexical(texts: Sequence[str], objects: tuple[str, str] | None,
                        spans: Sequence[tuple[SpanList, SpanList]] | None = None,
                        side: SideModel | None = None) -> np.ndarray:
    """Lexical features of passages on a comparative topic (object mentions found unless given; none without
    objects), followed, with a `side` model, by its side features (`app.stance_side.SideModel.passage_features`)."""
    if spans is None:
        spans = [object_mentions(text, objects) if objects else ([], []) for text in texts]
    rows = [lexical_features(text, *spans[i]) for i, text in enumerate(texts)]
    matrix = np.vstack(rows) if rows else np.zeros((0, len(FEATURE_NAMES)), np.float32)
    if side is None:
        return matrix
    sentences = [both_object_sentences(text, *spans[i]) for i, text in enumerate(texts)]
    return np.hstack([matrix, side.passage_features(sentences)])


def _mirrored_name(name: str) -> str:
    for prefix in ("", "side_"):
        for role, other in (("first_", "second_"), ("second_", "first_")):
            if name.startswith(prefix + role):
                return prefix + other + name[len(prefix + role):]
    return name


def mirrored_lexical(lexical: np.ndarray) -> np.ndarray:
    """`comparative_lexical` of the same texts with the objects named in the other order, without reading them
    again: each feature of the first object trades places with the same feature of the second, and the side model's
    FIRST and SECOND columns (it is symmetric itself, `SideModel.probabilities`) trade places too."""
    names = list(FEATURE_NAMES) + (list(SIDE_FEATURE_NAMES) if lexical.shape[1] > len(FEATURE_NAMES) else [])
    return lexical[:, [names.index(_mirrored_name(name)) for name in names]]


def comparative_features(embeddings: np.ndarray, lexical: np.ndarray, query_embeddings: np.ndarray) -> np.ndarray:
    """The comparative head's input: passage embedding, lexical features, and the passage's similarity to each of
    the topic's queries (`app.relevance.topic_queries`: title, title + description, description, narrative).

    `query_embeddings` holds the four query rows, or one row, the title, which stands for all four (as for a topic
    without description); either for all passages or per passage (n, 4, d). The embedding is the same whichever
    object comes first, so (trained on object-swapped copies) it only tells stance from no stance; which side comes
    from the object-aware lexical features. NO is mostly "not relevant" in the judgements (444 of the 551 NO
    passages of the 2022 dev topics have relevance 0), so the description and narrative help tell it apart.
    """
    queries = np.asarray(query_embeddings, dtype=np.float32)
    queries = queries[None] if queries.ndim == 1 else queries
    if queries.ndim == 2:
        queries = np.broadcast_to(queries, (len(embeddings),) + queries.shape)
    if queries.shape[1] == 1:
        queries = np.repeat(queries, len(QUERY_NAMES), axis=1)
    similarity = np.einsum("nd,nqd->nq", embeddings, queries)
    return np.hstack([embeddings, lexical, similarity]).astype(np.float32)


_AGAINST_TARGET = re.compile(r"\b(?:ban|bans|banned|banning|abolish\w*|prohibit\w*|forbid\w*|outlaw\w*|illegal|"
                             r"criminali[sz]\w*|criminal|restrict\w*|limit|disband\w*|end|stop|"
                             r"oppose\w*|not|never|no|harmful|bad|wrong)\b", re.IGNORECASE)


def topic_polarity(title: str) -> float:
    """-1.0 when the topic speaks against its target ("Should X be banned?", "X is harmful"), else +1.0.

    A PRO document on "ban X" says bad things about X, one on "support X" good things: stance is the topic's
    polarity times the document's sentiment toward the target (IBM Claim Stance's model; this word rule matches
    the annotated topic sentiment of all 25 motions of its train split).
    """
    return -1.0 if _AGAINST_TARGET.search(title) else 1.0


# Words a statement about a subject may hold besides the subject's and those against it (_AGAINST_TARGET):
# auxiliaries, modals, articles, a few prepositions and the motion's "we".
_FRAME_WORDS = frozenset("""
should must ought shall can could would will may might is are was were be been being am do does did has have had
the a an of to in on for we it
""".split())
_TOKEN = re.compile(r"[a-z0-9]+")
_COMPARING = frozenset({"than", "over", "vs", "versus"})  # a statement whose order of words is its meaning
_NOT = re.compile(r"n[’']t\b|\bcannot\b")
# How sure the orientation of a statement about the question's subject is taken to be: a text read surer the other
# way still turns it.
SUBJECT_CONFIDENCE = 0.9


def subject_sentiment(statement: str, question: str, max_words: int = 8) -> float | None:
    """+1 or -1 where `statement` only names the question's subject and what is to be done with it, as args.me
    conclusions often do, else None: "Abortion" and "Teacher tenure" are +1 (a PRO toward them favours the subject),
    "Abortion should be banned" and "Teacher tenure should be abolished" -1, "X should not be banned" +1 (each word
    against a target turns it). Such a statement is at most `max_words` words, all of them the question's (as Snowball
    stems: "Teacher tenure" names the subject of "Should teachers get tenure?") but for frame words and words against
    a target. Its side toward the question is this times the question's polarity (`topic_polarity`); the
    cross-encoder instead reads topical overlap as agreement ("Death Penalty" PRO toward "Should the death penalty
    be abolished?") and misses policy restatements ("Teacher tenure should be abolished" PRO toward "Should teachers
    get tenure?")."""
    words = _TOKEN.findall(_NOT.sub(" not", statement.lower()))
    against = [word for word in words if _AGAINST_TARGET.fullmatch(word)]
    named = [word for word in words if word not in _FRAME_WORDS and not _AGAINST_TARGET.fullmatch(word)]
    if not named or len(words) > max_words:
        return None
    stems = _stemmer().stemWords(named)
    if not set(stems) <= _stems(question):
        return None
    if _COMPARING & set(words) and not _in_order(stems, _stem_sequence(question)):
        return None  # "Democracy is better than communism" does not name "Is communism better than democracy?"
    return -1.0 if len(against) % 2 else 1.0


def _in_order(stems: list[str], sequence: tuple[str, ...]) -> bool:
    """Whether the stems come in the order the sequence first holds them."""
    positions = [sequence.index(stem) for stem in stems]
    return positions == sorted(positions)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=256)
def _stem_sequence(text: str) -> tuple[str, ...]:
    """The Snowball stems of a text's words in order; a question's are looked up once for all its statements."""
    return tuple(_stemmer().stemWords(_TOKEN.findall(text.lower())))


@lru_cache(maxsize=256)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem_sequence(text))


def controversial_features(embeddings: np.ndarray, topic_embedding: np.ndarray,
                           polarity: float | np.ndarray = 1.0) -> np.ndarray:
    """The controversial head's input: document embedding times the topic's polarity, the element-wise product
    of document and topic embeddings, and their similarity.

    The polarity-signed embedding lets a linear head read the document's sentiment toward the target and flip it
    for topics against their target; the product and similarity tell on-topic from unrelated (NO) text.
    `topic_embedding` and `polarity` are one value for all documents, or one row per document.
    """
    polarity = np.reshape(np.asarray(polarity, dtype=np.float32), (-1, 1))
    similarity = (embeddings * topic_embedding).sum(axis=1)
    return np.hstack([embeddings * polarity, embeddings * topic_embedding * 10.0,
                      similarity[:, None]]).astype(np.float32)


class SoftmaxHead:
    """A standardised multinomial logistic regression: softmax(((x - mean) / scale) @ weights + bias)."""

    def __init__(self, labels: Sequence[str], mean: np.ndarray, scale: np.ndarray, weights: np.ndarray,
                 bias: np.ndarray):
        self.labels = tuple(labels)
        self.mean, self.scale, self.weights, self.bias = mean, scale, weights, bias

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return softmax(((features - self.mean) / self.scale) @ self.weights + self.bias, axis=1)

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}_{name}": getattr(self, name) for name in ("mean", "scale", "weights", "bias")}

    @classmethod
    def from_arrays(cls, arrays, prefix: str, labels: Sequence[str]) -> "SoftmaxHead":
        return cls(labels, *(np.asarray(arrays[f"{prefix}_{name}"], dtype=np.float32)
                             for name in ("mean", "scale", "weights", "bias")))


class StanceModel:
    """Predicts Touché stance labels for passages on a topic, for either kind of topic."""

    def __init__(self, comparative: SoftmaxHead, controversial: SoftmaxHead, neutral_margin: float = 0.0,
                 metadata: dict | None = None, device: str = "auto", precision: str = "auto",
                 side: SideModel | None = None, neutral: SoftmaxHead | None = None):
        self.comparative = comparative
        self.controversial = controversial
        self.side = side  # the comparative head's side evidence (app.stance_side), if it was trained with it
        self.neutral = neutral  # SIDED / NEU on controversial topics, for texts the controversial head gives a side
        self.neutral_margin = neutral_margin
        self.metadata = metadata or {}
        self.device = device
        self.precision = precision
        self.cross_path: Path | None = None  # the stance cross-encoder's delta; None: the shipped one
        self._cross = None
        self._oriented: dict[tuple[str, str, bool], np.ndarray] = {}  # orient's rows by (question, statement, cross)

    @classmethod
    def load(cls, path: str | Path | None = None, device: str = "auto", precision: str = "auto") -> "StanceModel":
        """Load the trained heads (default: the artefact shipped in app/models/stance.npz)."""
        path = Path(path) if path is not None else DEFAULT_MODEL
        if not path.is_file():
            raise ToucheError(f"stance model not found: {path} (train it with `touche train stance`)")
        with np.load(path, allow_pickle=False) as arrays:
            metadata = json.loads(str(arrays["metadata"]))
            comparative = SoftmaxHead.from_arrays(arrays, "comparative", metadata["comparative_labels"])
            controversial = SoftmaxHead.from_arrays(arrays, "controversial", metadata["controversial_labels"])
            side = SideModel.from_arrays(arrays, "side") if "side_weights" in arrays.files else None
            neutral = (SoftmaxHead.from_arrays(arrays, "neutral", NEUTRAL_LABELS) if "neutral_weights" in arrays.files
                       else None)
        return cls(comparative, controversial, metadata.get("neutral_margin", 0.0), metadata, device, precision,
                   side, neutral)

    def save(self, path: str | Path) -> None:
        """Write the heads (comparative, controversial, and the side model and neutral head where present) and the
        metadata into one `.npz` (no pickle)."""
        metadata = dict(self.metadata, comparative_labels=list(self.comparative.labels),
                        controversial_labels=list(self.controversial.labels),
                        neutral_margin=self.neutral_margin)
        arrays = {**self.comparative.arrays("comparative"), **self.controversial.arrays("controversial"),
                  **(self.side.arrays("side") if self.side is not None else {}),
                  **(self.neutral.arrays("neutral") if self.neutral is not None else {})}
        check_finite(arrays, "stance model", Path(path))
        with atomic_file(Path(path), binary=True) as out:  # a full disk keeps the old model whole
            np.savez_compressed(out, metadata=np.asarray(json.dumps(metadata, sort_keys=True)), **arrays)

    def predict(self, topic: Topic, texts: list[str], embeddings: np.ndarray | None = None,
                task: str = "comparative", query_embeddings: np.ndarray | None = None,
                cross_depth: int = 0, stated: Sequence[tuple[str, str] | None] | None = None,
                unread: Sequence[tuple[str, str]] = (),
                turns: Sequence[tuple[str, int] | None] | None = None,
                unread_turns: Sequence[tuple[str, int]] = (),
                windows: Sequence[int] | None = None) -> list[StancePrediction]:
        """Label each text's stance toward the topic.

        `embeddings` (of the texts) and `query_embeddings` (of the topic's queries, `app.relevance.topic_queries`,
        title first; the title alone will do) are `app.encoder.encode` rows if known. On controversial topics the
        first `cross_depth` texts (a ranking's top) are also read by the stance cross-encoder (`app.stance_cross`),
        which takes PRO or CON from reading question and passage together; see `_with_side`. Comparative topics
        keep the head: a cross-encoder trained the same way scored below it in leave-topics-out cross-validation
        (`scripts/stance_experiments.py comparative-cross`).

        `stated` holds, per text, the stance its corpus states and the statement it is toward (args.me: the premise's
        PRO / CON toward the conclusion), or None. On controversial topics such a text takes a side (never NEU) and
        which side weighs that statement's orientation toward the question with the text's own reading, which the
        cross-encoder takes from the text without the statement it opens with (`_without_statement`). A statement's
        orientation is heard from its own reading and from the other texts read that state a stance toward it
        (`stated_sides`). `unread` holds the stated stances of documents that are not read (a ranking's tail,
        controversial topics only): each gets PRO or CON from its statement's orientation so heard, after the texts'
        predictions. `turns` holds, per text, its debate and post number where its id tells them (`app.debates.turn`):
        on controversial topics a text that states no stance also hears the other posts read of its debate, whose
        turns say whether they argue its side or the other (`app.debates.heard_from_turns`). `unread_turns` holds
        the debate and post number of documents that are not read and state no stance (a ranking's tail): each gets
        PRO or CON from what the posts read of its debate say so, or Q0 (no label) where none was read, after the
        stated ones.

        `windows` (comparative topics) reads the texts as the passages of fewer documents, each document's
        `windows[i]` consecutive ones together (`pool_windows`): one prediction per document.
        """
        if task not in TASKS:
            raise ToucheError(f"unknown task {task!r}: choose one of {', '.join(TASKS)}")
        if (unread or unread_turns) and task != "controversial":
            raise ValueError("only controversial topics label documents they do not read")
        if not texts and not unread:
            return [StancePrediction("Q0", 0.0) for _ in unread_turns]  # nothing read to hear
        if embeddings is None:
            embeddings = self._encode(list(texts))
        if query_embeddings is None:
            query_embeddings = self._encode(topic_queries(topic) if task == "comparative" else [topic.title])
        query_embeddings = np.atleast_2d(query_embeddings)
        if task == "comparative":
            return self._predict_comparative(topic, texts, embeddings, query_embeddings, windows)
        if windows is not None:
            raise ValueError("only comparative topics read documents by several passages")
        return self._predict_controversial(topic, texts, embeddings, query_embeddings, cross_depth,
                                           stated, unread, turns, unread_turns)

    def _predict_comparative(self, topic: Topic, texts: list[str], embeddings: np.ndarray,
                             query_embeddings: np.ndarray, windows: Sequence[int] | None) -> list[StancePrediction]:
        """`predict` on a comparative topic: the head, reading each text toward the topic's two objects, and a
        document's texts together where `windows` groups them."""
        objects = topic.objects  # from <objects>, else from its question (`questions.with_objects`)
        if objects is None:
            log.warning("topic %s names no objects: its documents are NEUTRAL or NO, no side", topic.number)
        probabilities = self.comparative_probabilities(texts, objects, embeddings, query_embeddings)
        if windows is not None:
            probabilities = pool_windows(probabilities, windows)
        return decode_comparative(probabilities, self.comparative.labels)

    def _predict_controversial(self, topic: Topic, texts: list[str], embeddings: np.ndarray,
                               query_embeddings: np.ndarray, cross_depth: int,
                               stated: Sequence[tuple[str, str] | None] | None, unread: Sequence[tuple[str, str]],
                               turns: Sequence[tuple[str, int] | None] | None,
                               unread_turns: Sequence[tuple[str, int]]) -> list[StancePrediction]:
        """`predict` on a controversial topic: the heads, the cross-encoder on the top `cross_depth` texts, the
        stated stances and the debates' turns."""
        cross = cross_depth > 0  # the run reads with the cross-encoder: statements are oriented by it too
        cross_depth = min(cross_depth, len(texts))
        features = controversial_features(embeddings, query_embeddings[0], topic_polarity(topic.title))
        probabilities = self.controversial.probabilities(features)
        statements = list(stated) if stated is not None else [None] * len(texts)
        # The cross-encoder reads the top texts that may take a side: a side cannot win where the head's NO does.
        read = np.flatnonzero(_may_take_side(probabilities[:cross_depth], self.controversial.labels))
        # Each text's PRO vs CON log-odds as the run reads it: the heads' where the run reads with them alone,
        # else the cross-encoder's on the texts it reads. The heads' readings of the texts it leaves are not
        # heard beside its own: at --stance-depth 10 they cost UKPConvArg1's debate posts 0.855 -> 0.808
        # (`stated-debates`), where the heads read debate posts poorly.
        readings: list[float | None] = (
            [None] * len(texts) if cross
            else [float(odds) for odds in _log_odds(_pro_con(probabilities, self.controversial.labels))])
        if read.size:
            side = self.cross.controversial(topic.title, [_without_statement(texts[i], statements[i])
                                                          for i in read])
            probabilities[read] = _with_side(probabilities[read], self.controversial.labels, side,
                                             self.cross.labels)
            for i, odds in zip(read, _log_odds(_pro_con(side, self.cross.labels))):
                readings[i] = float(odds)
        neutral = (None if self.neutral is None
                   else self.neutral.probabilities(features)[:, NEUTRAL_LABELS.index("NEU")])
        heard = debates.heard_from_turns(list(turns or [None] * len(texts)) + list(unread_turns),
                                         readings + [None] * len(unread_turns))
        rows = [i for i, odds in enumerate(heard[:len(texts)]) if odds is not None and statements[i] is None]
        if rows:
            probabilities[rows] = _with_stated(probabilities[rows], self.controversial.labels,
                                               _as_sides(np.array([heard[i] for i in rows])))
        tail = [_side_of(odds) for odds in heard[len(texts):]]
        rows = [i for i, statement in enumerate(statements) if statement is not None]
        sides = self.stated_sides(topic, [statements[i] for i in rows] + list(unread), query_embeddings[0],
                                  cross=cross, readings=[readings[i] for i in rows] + [None] * len(unread))
        if rows:
            probabilities[rows] = _with_stated(probabilities[rows], self.controversial.labels, sides[:len(rows)])
            if neutral is not None:
                neutral[rows] = 0.0
        return self._decode_controversial(probabilities, neutral) + [
            _pro_or_con(pro, con) for pro, con in sides[len(rows):]] + tail

    def comparative_probabilities(self, texts: Sequence[str], objects: tuple[str, str] | None,
                                  embeddings: np.ndarray, query_embeddings: np.ndarray) -> np.ndarray:
        """The comparative head's probabilities for texts on a question about `objects`, read in both object orders
        (`symmetric_probabilities`), so that naming the objects the other way round exchanges FIRST and SECOND.

        Without objects every text reads as naming neither: the sides tie, and the head still tells NEUTRAL from NO
        (topic-held-out on the 2022 dev passages, their objects hidden: macro-F1 0.289 ± 0.006, NEUTRAL F1 0.447,
        where labelling all NO gave 0.166; `scripts/stance_experiments.py no-objects`)."""
        forward = comparative_lexical(texts, objects, side=self.side)
        return symmetric_probabilities(self.comparative, comparative_features(embeddings, forward, query_embeddings),
                                       comparative_features(embeddings, mirrored_lexical(forward), query_embeddings))

    def stated_sides(self, topic: Topic, stated: Sequence[tuple[str, str]], topic_embedding: np.ndarray | None = None,
                     cross: bool = True, readings: Sequence[float | None] | None = None) -> np.ndarray:
        """P(PRO), P(CON) toward the topic's question, as rows, of stated stances (side, statement): a PRO toward a
        statement takes the statement's orientation, a CON the opposite.

        A statement's orientation is its own reading (`orient`) and what the texts stating a stance toward it say:
        `readings` holds each stated stance's text's PRO vs CON log-odds where that text was read (by the
        cross-encoder, or by the heads where a run reads with them alone), else None. The
        arguments of one debate share their conclusion, so their two sides' readings, each turned by its stated
        side, add up to which side of the question the conclusion is on. Each row hears the other texts, not its
        own, which its caller weighs in (`_with_stated`). On ArgKP-2021's held-out motions as debates of about 3
        arguments (`scripts/stance_experiments.py stated-debates`) PRO / CON macro-F1 0.929 -> 0.941, on UKPConvArg1's
        debate posts 0.766 -> 0.944; read by the heads alone (`stated-debates --heads`) 0.727 -> 0.778 and 0.729 ->
        0.808.
        """
        if not stated:
            return np.zeros((0, 2), np.float32)
        # One debate, one conclusion, however its titles are cased or punctuated ("Abortion", "abortion."): each
        # is read once, as first written.
        keys = [_statement_key(target) for _, target in stated]
        written: dict[str, str] = {}
        for key, (_, target) in zip(keys, stated):
            written.setdefault(key, target)
        keys_read = sorted(written, key=written.get)
        orientation = dict(zip(keys_read, _log_odds(self.orient(topic, [written[key] for key in keys_read],
                                                                topic_embedding, cross=cross))))
        signs = np.array([1.0 if side == "PRO" else -1.0 for side, _ in stated])
        own = np.array([0.0 if reading is None else reading for reading in (readings or [None] * len(stated))])
        for key, sign, reading in zip(keys, signs, own):
            orientation[key] += sign * reading
        return _as_sides(np.array([sign * orientation[key] for key, sign in zip(keys, signs)]) - own)

    def orient(self, topic: Topic, statements: list[str], topic_embedding: np.ndarray | None = None,
               cross: bool = True) -> np.ndarray:
        """P(PRO), P(CON) of each statement toward the topic's question, as rows: "Abortion should be illegal" is
        CON toward "Should abortion be legal?". Read by the cross-encoder (`cross`), else by the controversial head
        on the statements' embeddings, as it reads texts; `topic_embedding` is the title's, if known. A statement
        is read once per question and reader: topics that ask one question share its readings."""
        known = {statement: self._oriented.get((topic.title, statement, cross)) for statement in statements}
        missing = [statement for statement, row in known.items() if row is None]
        if missing:
            for statement, row in zip(missing, self._orient(topic, missing, topic_embedding, cross)):
                known[statement] = self._oriented[(topic.title, statement, cross)] = row
        return np.array([known[statement] for statement in statements], dtype=np.float32).reshape(-1, 2)

    def _orient(self, topic: Topic, statements: list[str], topic_embedding: np.ndarray | None,
                cross: bool) -> np.ndarray:
        """`orient` for statements not read before: a statement about the question's subject alone ("Death Penalty",
        "Teacher tenure should be abolished") by its sentiment times the question's polarity (`subject_sentiment`),
        the rest by the reader."""
        sides = np.zeros((len(statements), 2), np.float32)
        polarity = topic_polarity(topic.title)
        sentiments = [subject_sentiment(statement, topic.title) for statement in statements]
        subject = np.array([sentiment is not None for sentiment in sentiments], bool)
        for i in np.flatnonzero(subject):
            pro = SUBJECT_CONFIDENCE if sentiments[i] * polarity > 0 else 1.0 - SUBJECT_CONFIDENCE
            sides[i] = (pro, 1.0 - pro)
        read = [statement for statement, sentiment in zip(statements, sentiments) if sentiment is None]
        if read:
            sides[~subject] = self._read_sides(topic, read, topic_embedding, cross)
        return sides

    def _read_sides(self, topic: Topic, statements: list[str], topic_embedding: np.ndarray | None,
                    cross: bool) -> np.ndarray:
        if cross:
            return _pro_con(self.cross.controversial(topic.title, statements), self.cross.labels)
        if topic_embedding is None:
            topic_embedding = self._encode([topic.title])[0]
        features = controversial_features(self._encode(list(statements)), topic_embedding, topic_polarity(topic.title))
        sides = _pro_con(self.controversial.probabilities(features), self.controversial.labels)
        return sides / sides.sum(axis=1, keepdims=True)

    @property
    def cross(self):
        """The controversial stance cross-encoder (`app.stance_cross`), loaded on first use."""
        if self._cross is None:
            from app.stance_cross import DEFAULT_MODEL as CROSS_MODEL
            from app.stance_cross import StanceCrossEncoder

            self._cross = StanceCrossEncoder.load(self.cross_path or CROSS_MODEL, device=self.device,
                                                  precision=self.precision)
        return self._cross

    def _decode_controversial(self, probabilities: np.ndarray,
                              neutral: np.ndarray | None = None) -> list[StancePrediction]:
        """PRO / CON / NO by the highest probability; a side becomes NEU where the neutral head's P(NEU) (`neutral`)
        is over 0.5, or, without a neutral head, where PRO and CON are within `neutral_margin`."""
        labels = self.controversial.labels
        predictions = []
        for i, row in enumerate(probabilities):
            label = labels[int(row.argmax())]
            pro, con = float(row[labels.index("PRO")]), float(row[labels.index("CON")])
            if label in ("PRO", "CON") and neutral is not None:
                sided = neutral[i] <= 0.5
                predictions.append(StancePrediction(label, float(row.max())) if sided else
                                   StancePrediction("NEU", float(neutral[i])))
            elif label in ("PRO", "CON") and abs(pro - con) < self.neutral_margin:
                predictions.append(StancePrediction("NEU", 1.0 - abs(pro - con)))
            else:
                predictions.append(StancePrediction(label, float(row.max())))
        return predictions

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Texts embedded on the run's device at the run's precision (--precision fp32 read them in bf16)."""
        from app.encoder import encode

        return encode(texts, device=self.device, precision=self.precision)


def _with_side(probabilities: np.ndarray, labels: Sequence[str], side: np.ndarray,
               side_labels: Sequence[str]) -> np.ndarray:
    """The head's probabilities with the PRO / CON split taken from the cross-encoder: whether a text takes a
    side (P(PRO) + P(CON); not NO, nor NEU where the head learnt it) stays the head's call, which side it takes
    becomes the cross-encoder's."""
    result = probabilities.copy()
    stance = _pro_con(probabilities, labels).sum(axis=1)
    for label in ("PRO", "CON"):
        result[:, labels.index(label)] = stance * side[:, side_labels.index(label)]
    return result


def _may_take_side(probabilities: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Rows where PRO or CON can be the most likely label, however `_with_side` splits their sum between them."""
    sides = _pro_con(probabilities, labels).sum(axis=1)
    others = [i for i, label in enumerate(labels) if label not in ("PRO", "CON")]
    return sides >= probabilities[:, others].max(axis=1) if others else np.ones(len(probabilities), bool)


def _without_statement(text: str, statement: tuple[str, str] | None) -> str:
    """What a text says itself: an args.me document's text without the conclusion it opens with (its stated
    stance's target), which either side's arguments share. Read with it, the cross-encoder takes the conclusion's
    side for the argument's: on ArgKP-2021's held-out motions as args.me (`scripts/stance_experiments.py
    stated-run`, the reranked head read whole) PRO / CON macro-F1 0.881 with the conclusion, 0.982 without."""
    if statement is None or not statement[1] or not text.startswith(statement[1]):
        return text
    return text[len(statement[1]):].strip() or text


def _statement_key(statement: str) -> str:
    """A statement's words, lower-cased: what tells one conclusion from another (one without words is its own)."""
    return " ".join(re.findall(r"\w+", statement.lower())) or statement


def _pro_con(probabilities: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """The P(PRO), P(CON) columns of probabilities over `labels`."""
    return probabilities[:, [labels.index("PRO"), labels.index("CON")]]


def _log_odds(sides: np.ndarray) -> np.ndarray:
    """log(P(PRO) / P(CON)) of rows of P(PRO), P(CON)."""
    sides = np.clip(np.asarray(sides, dtype=np.float64), 1e-9, None)
    return np.log(sides[:, 0]) - np.log(sides[:, 1])


def _side_of(odds: float | None) -> StancePrediction:
    """PRO or CON by log-odds (`_pro_or_con`); Q0 (no label) without any."""
    return StancePrediction("Q0", 0.0) if odds is None else _pro_or_con(*_as_sides(np.array([odds]))[0])


def _pro_or_con(pro: float, con: float) -> StancePrediction:
    """The likelier of PRO and CON, with its probability."""
    return StancePrediction("PRO", float(pro)) if pro >= con else StancePrediction("CON", float(con))


def _as_sides(odds: np.ndarray) -> np.ndarray:
    """Rows of P(PRO), P(CON) of PRO vs CON log-odds."""
    pro = expit(np.clip(np.asarray(odds, dtype=np.float64), -30.0, 30.0))
    return np.stack([pro, 1.0 - pro], axis=1).astype(np.float32)


def _with_stated(probabilities: np.ndarray, labels: Sequence[str], stated: np.ndarray) -> np.ndarray:
    """The head's probabilities with the PRO / CON split weighed by a stated side (`stated`: rows of P(PRO),
    P(CON)): the two readings' odds multiply, so a confident statement decides and an unsure one leaves the text's
    reading; whether the text takes a side at all stays the head's call."""
    weighed = _pro_con(probabilities, labels) * stated
    total = weighed.sum(axis=1, keepdims=True)
    split = np.divide(weighed, total, out=np.full_like(weighed, 0.5), where=total > 0)
    return _with_side(probabilities, labels, split, ("PRO", "CON"))


def symmetric_probabilities(head: SoftmaxHead, features: np.ndarray, swapped: np.ndarray) -> np.ndarray:
    """The comparative head's probabilities on `features`, averaged with those on `swapped` (the same texts with the
    objects in the other order) with FIRST and SECOND exchanged back. Trained on object-swapped copies the head is
    symmetric only up to the solver's tolerance, the less so the more weight the side features get; the average is
    symmetric exactly, so that texts whose features are symmetric tie on FIRST and SECOND (`decode_comparative`)."""
    return average_orders(head.probabilities(features), head.probabilities(swapped), head.labels)


def average_orders(forward: np.ndarray, backward: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Comparative probabilities read with the objects in one order (`forward`) averaged with those read in the
    other (`backward`), whose FIRST and SECOND columns are exchanged back (SWAPPED)."""
    mirrored = [list(labels).index(SWAPPED[label]) for label in labels]
    return (forward + backward[:, mirrored]) / 2


def pool_windows(probabilities: np.ndarray, windows: Sequence[int]) -> np.ndarray:
    """One row of comparative probabilities per document from its passages' rows (`windows[i]` consecutive rows for
    document i): the mean of their log-probabilities, renormalised; a document of one passage keeps its row. On the
    dev web pages (`scripts/web_page_experiments.py page-stance`: 591 judged 2022 passages of 417 pages) a page read
    by its two best windows so scored macro-F1 0.520 against 0.483 by its best window alone (topic bootstrap of
    the difference [-0.011, +0.078]; by its three windows 0.475, the most confident of its windows 0.461)."""
    if len(probabilities) != sum(windows) or min(windows, default=1) < 1:
        raise ValueError("windows must count every row, each document one or more")
    pooled, start = [], 0
    for size in windows:
        rows = probabilities[start:start + size]
        if size > 1:
            rows = softmax(np.log(np.clip(rows, 1e-12, None)).mean(axis=0))[None, :]
        pooled.append(rows[0])
        start += size
    return np.array(pooled, dtype=probabilities.dtype).reshape(len(windows), probabilities.shape[1])


def decode_comparative(probabilities: np.ndarray, labels: Sequence[str]) -> list[StancePrediction]:
    """The most likely comparative label, except that a side is only named when the head can tell which.

    The passage embedding is the same whichever object comes first, so only the object-aware lexical features
    tell FIRST from SECOND; where they are symmetric (e.g. neither object is mentioned), the two sides' probabilities
    tie and float noise (bf16 at run time, fp32 in training) would pick one. Within `SIDE_TIE` of each other, the
    label is the more likely of NEUTRAL and NO instead.
    """
    first, second = labels.index("FIRST"), labels.index("SECOND")
    rest = [labels.index("NEUTRAL"), labels.index("NO")]
    predictions = []
    for row in probabilities:
        best = int(row.argmax())
        if best in (first, second) and abs(row[first] - row[second]) < SIDE_TIE:
            best = max(rest, key=lambda i: row[i])
        predictions.append(StancePrediction(labels[best], float(row[best])))
    return predictions
