"""What the arguments of one debate share, so that stance reads what each argument says itself.

args.me layouts without a stated stance join each argument's premises with its conclusion into one text: TIREx
writes premises + conclusion, BEIR and passage files made from args.me write conclusion + premises. On a debate
portal the conclusion is the debate's title, which both sides' arguments share: read with it, the stance
cross-encoder takes the title's side for the argument's. There is no conclusion field to drop, but args.me's
document ids name the debate (`debate_id`), and the words that every argument of a debate opens or closes with
(`shared_words`) are its title. ArgKP-2021's held-out arguments in drawn debates so joined, PRO / CON macro-F1 of
the cross-encoder: 0.737 (title first) and 0.774 (title last) read whole, 0.849 and 0.861 without the shared words,
0.863 for the arguments alone (`scripts/stance_experiments.py debate-titles`).

args.me 1.0 ids also number a debate's posts (`turn`), and two debaters take turns: a post hears what the other posts
read of its debate say of its side (`heard_from_turns`), and a post the run does not read gets its side from them.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .records import MAX_TEXT_CHARS, MAX_UNREAD_TEXT_CHARS, Document, StancePrediction

# args.me ids: "S<debate>-A<argument>" (args.me 2020-04-01, Touché 2020 and 2021) and
# "<debate>-<crawl time>-<argument>-<premise>" (args.me 1.0, BEIR's webis-touche2020).
_ARGS_ME_ID = re.compile(r"(S[0-9a-f]+)-A[0-9a-f]+|([0-9a-f]+-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)-(\d+)-\d+")
_WORD = re.compile(r"\S+")
# How much the other posts of a debate count toward a post's side, against its own reading (`heard_from_turns`):
# chosen on BEIR's sample (0.25 to 1 give 0.781 to 0.795 there; 0: 0.710), see `heard_from_turns`.
TURN_WEIGHT = 0.5


@dataclass
class StanceReading:
    """What the stance stage reads of one topic's ranking (`stance_reading`): the reranked head's texts, each with
    the stance its corpus states (or None) and its args.me 1.0 turn (or None); below the head, the documents that a
    stated stance, or the turns of a debate read above, label without being read."""

    head: list[str]
    texts: list[str]
    stated: list[tuple[str, str] | None]
    turns: list[tuple[str, int] | None]
    unread: list[tuple[str, tuple[str, str]]]
    unread_turns: list[tuple[str, tuple[str, int]]]

    def labels(self, doc_ids: list[str], predictions: list[StancePrediction]) -> list[str]:
        """The ranking's stance column, from `StanceModel.predict`'s predictions for the head, then the unread
        stated stances, then the unread turns: Q0 where nothing labels a document."""
        labelled = self.head + [doc_id for doc_id, _ in self.unread] + [doc_id for doc_id, _ in self.unread_turns]
        found = {doc_id: prediction.label for doc_id, prediction in zip(labelled, predictions)}
        return [found.get(doc_id, "Q0") for doc_id in doc_ids]


def stance_reading(doc_ids: list[str], head: list[str], texts: list[str], documents: dict[str, Document],
                   controversial: bool) -> StanceReading:
    """What the stance stage reads of a ranking (`doc_ids`) whose reranked `head` reads `texts`; `documents` are
    the topic's candidates, by id. On controversial topics an argument that states no stance is read without the
    words its debate's arguments among the candidates share (its title), and below the head a stated stance, or
    the turns of a debate whose posts were read, is cheap to turn into a label."""
    stated = [stated_stance(documents.get(doc_id)) for doc_id in head]
    turns = [turn(doc_id) for doc_id in head]
    if not controversial:
        return StanceReading(head, texts, stated, turns, [], [])
    # Only the debates of the head's arguments: their titles are the only ones read (`own_words`); every
    # candidate's text split twice, 5,000 a topic, took 37 of a stance stage's 39 s at --rerank-depth 2.
    wanted = {debate_id(doc_id) for doc_id, statement in zip(head, stated) if statement is None}
    shared = shared_words(documents.values(), wanted - {None})
    texts = [text if statement is not None else own_words(text, shared.get(doc_id))
             for doc_id, text, statement in zip(head, texts, stated)]
    read = set(head)
    tail = [(doc_id, stated_stance(documents.get(doc_id))) for doc_id in doc_ids if doc_id not in read]
    debates_read = {position[0] for position in turns if position is not None}
    tail_turns = [(doc_id, turn(doc_id)) for doc_id, statement in tail if statement is None]
    return StanceReading(head, texts, stated, turns,
                         [(doc_id, statement) for doc_id, statement in tail if statement is not None],
                         [(doc_id, position) for doc_id, position in tail_turns
                          if position is not None and position[0] in debates_read])


def stated_stance(document: Document | None) -> tuple[str, str] | None:
    """The stance a document's corpus states and the statement it is toward (args.me), or None."""
    if document is None or document.stance is None or document.stance_target is None:
        return None
    return document.stance, document.stance_target


def debate_id(doc_id: str) -> str | None:
    """The debate an args.me argument id names, or None for any other id."""
    match = _ARGS_ME_ID.fullmatch(doc_id)
    return None if match is None else match.group(1) or match.group(2)


def turn(doc_id: str) -> tuple[str, int] | None:
    """(debate, post number) of an args.me 1.0 id, whose numbers count a debate's posts in order; None for other
    ids (args.me 2020-04-01's are hashes)."""
    match = _ARGS_ME_ID.fullmatch(doc_id)
    return None if match is None or match.group(3) is None else (match.group(2), int(match.group(3)))


def heard_from_turns(turns: Sequence[tuple[str, int] | None], readings: Sequence[float | None],
                     weight: float = TURN_WEIGHT) -> list[float | None]:
    """Per post, what the other posts read of its debate say of its side: their PRO vs CON log-odds (`readings`,
    None where a post was not read) as they are for posts of its turn parity and turned for the others, summed and
    times `weight`; None where no other post of its debate was read.

    On a debate portal two debaters take turns, so posts whose numbers differ by an odd number argue opposite
    sides: of the pairs of sided posts of one debate in BEIR's sample (`docs/data/beir-touche2020-sample-stance.tsv`)
    39 of 45 of different parity take opposite sides toward the query, 20 of 28 of the same parity the same side.
    The cross-encoder's PRO / CON macro-F1 on the 69 sided texts with another of their debate in the sample: 0.710
    alone, 0.795 hearing their debate (`scripts/stance_experiments.py debate-turns`)."""
    heard: dict[str, float] = defaultdict(float)  # per debate, toward the even posts' side
    read: dict[str, int] = defaultdict(int)
    own: list[float] = []
    for position, reading in zip(turns, readings):
        known = position is not None and reading is not None
        own.append((-reading if position[1] % 2 else reading) if known else 0.0)
        if known:
            heard[position[0]] += own[-1]
            read[position[0]] += 1
    found: list[float | None] = []
    for position, mine, reading in zip(turns, own, readings):
        others = 0 if position is None else read[position[0]] - (reading is not None)
        if others == 0:
            found.append(None)
            continue
        said = heard[position[0]] - mine
        found.append(weight * (-said if position[1] % 2 else said))
    return found


def shared_words(documents: Iterable[Document], wanted: set[str] | None = None
                 ) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """For each argument whose debate has another among `documents` (of the `wanted` debates only, where given):
    the words that all of them open with and the words they all close with (either may be empty)."""
    debates: dict[str, list[Document]] = defaultdict(list)
    for document in documents:
        debate = debate_id(document.doc_id)
        if debate is not None and (wanted is None or debate in wanted):
            debates[debate].append(document)
    shared = {}
    for members in debates.values():
        split = {document.doc_id: tuple(document.text.split()) for document in members}  # each text split once
        words = set(split.values())
        if len(words) < 2:  # one argument, or copies of one text: nothing tells its title from its premises
            continue
        opening = _common_prefix(words)
        # A text cut has lost its end, and with it the title TIREx puts there; it is exactly as long as its bound.
        whole = {split[document.doc_id] for document in members
                 if len(document.text) < MAX_TEXT_CHARS and len(document.text) != MAX_UNREAD_TEXT_CHARS}
        closing = _common_prefix({tuple(reversed(text)) for text in whole})[::-1] if len(whole) >= 2 else ()
        for document in members:
            shared[document.doc_id] = (opening, closing)
    return shared


def _common_prefix(texts: set[tuple[str, ...]]) -> tuple[str, ...]:
    return os.path.commonprefix(list(texts))  # of any sequences, here of words


def own_words(text: str, shared: tuple[tuple[str, ...], tuple[str, ...]] | None) -> str:
    """`text` (an argument or its passage) without the opening and closing words its debate shares, where it has
    them; unchanged where nothing would be left."""
    if shared is None:
        return text
    opening, closing = shared
    words = [match.span() for match in _WORD.finditer(text)]
    start, end = 0, len(words)
    if opening and tuple(text[a:b] for a, b in words[: len(opening)]) == opening:
        start = len(opening)
    if closing and len(closing) <= end - start and tuple(text[a:b] for a, b in words[end - len(closing):]) == closing:
        end -= len(closing)
    if start >= end or (start, end) == (0, len(words)):
        return text
    return text[words[start][0]: words[end - 1][1]]
