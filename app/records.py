"""Plain records passed between the stages of a run (in the spirit of ir_datasets' namedtuples), and what every
stage may rely on of them: a bounded text, an id a run file can hold."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, replace
from decimal import Decimal

# The one bound on a document's length: every stage reads at most this prefix, so one 15 MB page costs what a long
# ordinary one does. Touché passages are far shorter; of the 536 dev web pages' main contents 87 run past 20,000
# characters (the 90th percentile 32,000, the longest 620,000), 10 past this bound. The stages read a long document by
# its passages (`app.passages`), sought in all of it.
MAX_TEXT_CHARS = 100_000
# What a candidate below the rerank depth keeps of its text: no stage reads its passages (only the words a debate's
# arguments open with, `debates.shared_words`), and a run holds up to --candidates of them a topic (at 100,000
# characters, 5 topics' 1,000 took 1.9 GB where 20,000 took 0.95).
MAX_UNREAD_TEXT_CHARS = 20_000
# How a document's text is read (`bounded_text`), in the keys of everything cached from texts (a corpus's index and
# embeddings, ChatNoir's page texts): raised when the same bytes read otherwise (2: composed and cleaned; 3: a NUL
# goes, not a space; 4: every noncharacter, bidirectional controls; 5: a terminal's escape sequence goes whole; 6:
# joiners, non-joiners and direction marks within words go), so that a kept cache never serves what an older reading
# made.
TEXT_READING = 6
# Each Touché task's stance labels (column 2 of a run; Q0 where a run gives none).
COMPARATIVE_LABELS = ("FIRST", "SECOND", "NEUTRAL", "NO")
CONTROVERSIAL_LABELS = ("PRO", "CON", "NEU", "NO")
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"\s")
# What a run file's id must not hold besides whitespace: controls (NUL ends a string in C tools), lone surrogates (no
# UTF-8 file can hold them) and the invisible separators that hide an id's end (U+180E, U+200B, U+2060, U+FEFF).
_UNFIT_FOR_IDS = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u180e\u200b\u2060\ufeff]")
# A number in the digits trec_eval reads (to be matched whole): not Python's "1_000", "３" or "inf", which float() takes.
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(r"[+-]?[0-9]+")  # the same for an integer (a rank, a qrels grade: trec_eval's atol)
# What a text never holds: controls but tab and line breaks, DEL and the C1 controls (which Resiliparse passes
# through), noncharacters and lone surrogates. Taken out of a page's markup and again out of every text, where
# character references (&#1;, &#157;, &#xFFFE;) put them back: a NUL goes (browsers ignore it, as HTML asks: as a
# space it cut "manufacturer" into "man ufacturer"), the others become spaces (`without_unreadable`).
_UNREADABLE_BMP = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ud800-\udfff\ufffe\uffff"
_ASTRAL_NONCHARACTERS = "".join(chr(plane << 16 | low) for plane in range(1, 17) for low in (0xFFFE, 0xFFFF))
UNREADABLE = re.compile(f"[{_UNREADABLE_BMP}{_ASTRAL_NONCHARACTERS}]")
# ECMA-48's control sequences (colours, cursor moves), an OSC up to its BEL or ST (titles,
# hyperlinks: ESC ] 8 ;; URL ESC \\), and ESC's two-character sequences (`tput sgr0` writes ESC ( B before ESC [ m)
_TERMINAL_ESCAPE = re.compile(r"\x1b\[[0-?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,2048}(?:\x07|\x1b\\)"
                              r"|\x1b[ -/][0-~]")
# Invisible characters within words (a soft hyphen, the combining grapheme joiner, the Arabic letter mark, the Mongolian
# vowel separator, zero-width spaces, joiners and non-joiners, the direction marks, the word joiner and invisible
# operators, a byte order mark, the controls of bidirectional embeddings and isolates), which the tokenizers read as
# breaks: "uni&shy;forms" was the terms "uni" and "form", "Lap&zwj;tops" no mention of laptops.
_BREAKERS = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069"
_WORD_BREAKERS = re.compile(f"[{_BREAKERS}]")
# Spaces within a line besides the plain one, Unicode's too: a no-break space between words was no space to the
# sentence splitter and the stance features, and flipped a passage's side.
_OTHER_SPACES = "\t\r\f\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_SPACES = re.compile(f"[ {_OTHER_SPACES}]+")
# The characters `clean_text` changes (besides runs of plain spaces, empty lines and spaces at a line's ends): these
# and the astral noncharacters.
_CLEANED = f"{_UNREADABLE_BMP}{_BREAKERS}{_OTHER_SPACES}\u2028\u2029"
_TO_CLEAN = re.compile(f"[{_CLEANED}{_ASTRAL_NONCHARACTERS}]")
# Where `_TO_CLEAN` may find something, told ten times faster: re tests a class listing astral characters (the
# noncharacters U+1FFFE ...) at 34 ns a character, half of reading a 1 GB args.me; this one, whose astral part is one
# range, at 3 ns. A text holding any astral character (an emoji) is then searched with `_TO_CLEAN`.
_MAY_CLEAN = re.compile(f"[{_CLEANED}\U00010000-\U0010ffff]")


FUNCTION_WORDS = frozenset({"a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
                            "as", "is", "are", "vs", "versus", "than", "it", "this", "that"})


# Words that most questions hold, whatever they ask.
QUESTION_WORDS = frozenset({"should", "would", "could", "can", "will", "do", "does", "did", "be", "been", "was", "were",
                            "has", "have", "had", "what", "which", "who", "why", "how", "when", "where", "i", "we",
                            "you", "my", "our", "your", "better", "best", "worse", "more", "less", "not", "no"})

_ASKING_WORDS = FUNCTION_WORDS | QUESTION_WORDS


def word_stems(text: str) -> set[str]:
    """A text's words but for function and question words, each by its first four letters ("laptops", "laptop";
    "safety", "safe"): what a keyword query and its question share."""
    return {word[:4] for word in re.findall(r"\w+", text.lower()) if word not in _ASKING_WORDS}


def encodable(text: str) -> str:
    """The text with lone surrogates (valid JSON escapes, but not encodable as UTF-8 by any tokenizer, cache or run
    file) replaced by U+FFFD."""
    return _LONE_SURROGATES.sub("\ufffd", text)


def visible(text: str) -> bool:
    """Whether the text holds a letter, mark, number, punctuation or symbol: a title or question of nothing but
    spaces, controls and format characters (U+200B, U+FEFF) asks nothing."""
    return any(unicodedata.category(char)[0] not in "ZC" for char in text)


def bounded_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """The part of a document's text that the stages read: `encodable`, `clean_text` (a no-break space is a space,
    a soft hyphen goes), in Unicode's composed form (NFC: "café" written as "e" and an accent was another word to
    BM25 and the stance features), then its first `limit` characters: a text cut is as long as that, which tells
    the cut (a debate's title is sought at the end of whole texts only)."""
    text = text[:2 * limit]  # cleaning may shorten it, composing lengthen it
    ascii_only = text.isascii()  # then it has no surrogates and is composed: half the time of this function saved
    if not ascii_only:
        text = encodable(text)
    if _needs_cleaning(text):
        text = clean_text(text)
    if not ascii_only and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text[:limit]


def _needs_cleaning(text: str) -> bool:
    """Whether `clean_text` would change the text, told without cleaning it: cleaning every text would cost 40 s
    over 868k passages, read twice, and most need none. Any change counts, so that a text reads the same whether it
    holds another odd character or not (an args.me conclusion is sought at its text's start)."""
    if _MAY_CLEAN.search(text) and _TO_CLEAN.search(text) or "  " in text or text[:1].isspace() or text[-1:].isspace():
        return True
    return "\n" in text and (" \n" in text or "\n " in text or "\n\n" in text)  # most passages are one line


def without_unreadable(text: str) -> str:
    """A text without the characters no text holds (UNREADABLE): a NUL goes, the others become spaces; a terminal's
    escape sequence goes whole (its ESC alone left "[31m" as a word: "Is [31mtea ..." named the object "0m")."""
    if "\x1b" in text:
        text = _TERMINAL_ESCAPE.sub("", text)
    return UNREADABLE.sub(" ", text.replace("\x00", ""))


def clean_text(text: str) -> str:
    """A text as the stages read it: characters no text holds go (`without_unreadable`), invisible word breakers
    go, runs of spaces within lines collapse and empty lines go."""
    lines = (_SPACES.sub(" ", _WORD_BREAKERS.sub("", without_unreadable(line))).strip()
             for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def record_id(value) -> str | None:
    """A document or query id as a run file can hold it: a number or a string, stripped, one word without control
    characters, lone surrogates or invisible separators; else None. The run file's columns are split on whitespace,
    a lone surrogate cannot be written as UTF-8, and a NUL or an invisible separator ends or hides an id for the
    tools that read runs. Other format characters (a soft hyphen, the joiners of Persian words and emoji) stay. A
    whole float is its integer: pandas writes an id column holding a NaN as 1.0, 2.0, ... (they were bad lines)."""
    if isinstance(value, (float, Decimal)) and math.isfinite(value) and value == int(value) and abs(value) <= 2 ** 53:
        value = int(value)  # within 2**53 exact: no rounded id (args.me's reader gives numbers as Decimal)
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        return None
    value = str(value).strip()
    return value if value and not _WHITESPACE.search(value) and not _UNFIT_FOR_IDS.search(value) else None


def query_id(value) -> str | None:
    """A topic's number as `record_id` reads ids, as the qrels write it: without invisible format characters (a
    right-to-left mark pasted with it made a topic no judgement names, and no re-rank line matched it)."""
    if isinstance(value, str):
        value = "".join(char for char in value if unicodedata.category(char) != "Cf")
    return record_id(value)


def record_score(value) -> float | None:
    """A first stage's score as a run file and the fusion can use it: a finite number; else None (JSON's NaN and
    Infinity, an integer too large for a float, a string)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def scores_or_order(scores: list[float | None]) -> list[float]:
    """A first stage's scores for one topic's candidates in their given order, where each is a finite number (None
    where it is not: NaN, inf, no number); else the order's own, 1 / (1 + position / 100): 1, 0.99, ..., 0.5 at the
    101st, positive and falling as a BM25 score, and read as one (`fusion.lexical_feature`). Mixed scores rank
    nothing."""
    if any(score is None for score in scores):
        return [1.0 / (1.0 + position / 100) for position in range(len(scores))]
    return list(scores)


@dataclass(frozen=True)
class Topic:
    """One Touché topic; `objects` holds the two compared objects of a comparative topic."""

    number: str
    title: str
    description: str = ""
    narrative: str = ""
    objects: tuple[str, str] | None = None

    @property
    def quoted(self) -> str:
        """The title as a log line quotes it: at most 80 characters (a title may hold 5,000)."""
        return repr(self.title if len(self.title) <= 80 else self.title[:79] + "…")


@dataclass(frozen=True)
class Document:
    """A retrievable unit: an args.me argument, a passage, a web page's text.

    `stance` carries a stance the corpus itself states and `stance_target` the statement it is toward (args.me: the
    premise's PRO/CON toward the argument's conclusion); the stance stage turns it toward the topic. `stand_in`
    marks a text that stands in for one not read (a web page's title and snippet where the page could not be
    fetched): the document's length and text statistics are unknown, not the stand-in's.
    """

    doc_id: str
    text: str
    stance: str | None = None
    stance_target: str | None = None
    stand_in: bool = False


@dataclass(frozen=True)
class Candidate:
    """A document retrieved for a topic by the first stage, with that stage's score."""

    qid: str
    doc: Document
    score: float


def unread(document: Document) -> Document:
    """A candidate below the rerank depth, its text cut to `MAX_UNREAD_TEXT_CHARS`: no stage reads more of it."""
    return replace(document, text=document.text[:MAX_UNREAD_TEXT_CHARS])


def unread_cut(candidates: dict[str, list[Candidate]], depth: int) -> dict[str, list[Candidate]]:
    """The candidates, those of no topic's top `depth` with their texts cut (`unread`). A re-rank file's are all
    held at the bound while it is read: which are the top ones is known at its end."""
    read = {id(candidate.doc) for found in candidates.values() for candidate in found[:depth]}
    return {qid: [candidate if id(candidate.doc) in read else replace(candidate, doc=unread(candidate.doc))
                  for candidate in found]
            for qid, found in candidates.items()}


@dataclass(frozen=True)
class StancePrediction:
    """A document's stance toward a topic: a Touché label (Q0 where nothing tells it) and the model's confidence in
    [0, 1]."""

    label: str
    confidence: float


@dataclass(frozen=True)
class RunRow:
    """One line of a TREC run: `qid stance doc_id rank score tag`."""

    qid: str
    stance: str
    doc_id: str
    rank: int
    score: float
    tag: str
