"""What the arguments of one debate share, so that stance reads what each argument says itself.

args.me layouts without a stated stance join each argument's premises with its conclusion into one text: TIREx
writes premises + conclusion, BEIR and passage files made from args.me write conclusion + premises. On a debate
portal the conclusion is the debate's title, which both sides' arguments share: read with it, the stance
cross-encoder takes the title's side for the argument's. There is no conclusion field to drop, but args.me's
document ids name the debate (`debate_id`), and the words that every argument of a debate opens or closes with
(`shared_words`) are its title. ArgKP-2021's held-out arguments in drawn debates so joined, PRO / CON macro-F1 of
the cross-encoder: 0.737 (title first) and 0.774 (title last) read whole, 0.849 and 0.861 without the shared words,
0.863 for the arguments alone (`scripts/stance_experiments.py debate-titles`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from .records import MAX_TEXT_CHARS, Document

# args.me ids: "S<debate>-A<argument>" (args.me 2020-04-01, Touché 2020 and 2021) and
# "<debate>-<crawl time>-<argument>-<premise>" (args.me 1.0, BEIR's webis-touche2020).
_ARGS_ME_ID = re.compile(r"(S[0-9a-f]+)-A[0-9a-f]+|([0-9a-f]+-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)-\d+-\d+")
_WORD = re.compile(r"\S+")


def debate_id(doc_id: str) -> str | None:
    """The debate an args.me argument id names, or None for any other id."""
    match = _ARGS_ME_ID.fullmatch(doc_id)
    return None if match is None else match.group(1) or match.group(2)


def shared_words(documents: Iterable[Document]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """For each argument whose debate has another among `documents`: the words that all of them open with and the
    words they all close with (either may be empty)."""
    debates: dict[str, list[Document]] = defaultdict(list)
    for document in documents:
        debate = debate_id(document.doc_id)
        if debate is not None:
            debates[debate].append(document)
    shared = {}
    for members in debates.values():
        words = {tuple(document.text.split()) for document in members}
        if len(words) < 2:  # one argument, or copies of one text: nothing tells its title from its premises
            continue
        opening = _common_prefix(words)
        # A text cut at MAX_TEXT_CHARS has lost its end, and with it the title TIREx puts there.
        whole = {tuple(document.text.split()) for document in members if len(document.text) < MAX_TEXT_CHARS}
        closing = _common_prefix({tuple(reversed(text)) for text in whole})[::-1] if len(whole) >= 2 else ()
        for document in members:
            shared[document.doc_id] = (opening, closing)
    return shared


def _common_prefix(texts: set[tuple[str, ...]]) -> tuple[str, ...]:
    first, last = min(texts), max(texts)  # the sorted extremes share what every text shares
    length = 0
    while length < min(len(first), len(last)) and first[length] == last[length]:
        length += 1
    return first[:length]


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
