"""Question understanding: argumentative / factual / method, comparative or not, and the compared objects.

Two classifiers share one interface. `rules` is the rule-based baseline of Ajjour et al. (SIGIR 2022,
"Identifying Argumentative Questions in Web Search Logs") plus cue-word rules for comparisons and objects.
`model` (the default) is learned from Webis-CompQuestions-22 and the Touché topic titles
(`python -m app.training.questions`): each decision (comparative? argumentative or factual?) is the mean of two
logistic regressions, one over hashed n-grams and the paper's cue features, one over the question's
all-MiniLM-L6-v2 embedding (`app.encoder`: it reads paraphrases that no n-gram of the training questions holds),
and a per-token logistic regression with Viterbi decoding tags objects, aspects and predicates. The artefacts are
`app/models/questions.npz` (weights) and `app/models/questions.json` (settings and measured scores).

There is no labelled English data for the `method` type, so the learned heads never saw one: a question asking
for instructions ("how to …", "how do I/you …", the paper's strongest method cue) is called `method` by rule
(confidence 1.0, as for every rule decision); the learned head decides argumentative versus factual for the rest.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import sys
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy.special import expit
from tqdm import tqdm

from app import stance
from app.encoder import encode
from app.errors import ToucheError
from app.files import decoded
from app.records import Topic, visible
from app.settings import MODELS_DIR
from app.topics import (MAX_TOPIC_CHARS, clean_field, element_text, named, parse_objects, read_topics, xml_root,
                        xml_title)

log = logging.getLogger(__name__)

WEIGHTS_FILE = "questions.npz"
SETTINGS_FILE = "questions.json"

TAGS = ("O", "OBJ", "ASP", "PRED")
HASH_BITS = 18
EMBEDDED_AT_ONCE = 4096  # questions a classifier embeds at a time

_TOKEN = re.compile(r"\w+(?:\+\+|#)?")
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})
AUXILIARIES = frozenset({"is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "would",
                         "will", "shall", "may", "might", "must", "has", "have", "had"})
PERSONAL = frozenset({"i", "me", "my", "we", "us", "our", "you", "your"})
COMPARATIVE_CUES = frozenset({"better", "worse", "best", "worst", "vs", "versus", "difference", "differences",
                              "different", "compare", "compared", "comparison", "prefer", "than", "more",
                              "less", "most", "least", "superior", "inferior", "pros", "cons", "advantages",
                              "disadvantages"})
# "how to ...", "how do I ...": a request for instructions (the paper's method questions mostly start with how).
_METHOD = re.compile(r"^\s*how\s+(?:to\b|(?:do|can|could|should|would|shall)\s+(?:i|you|one)\b)", re.I)


@dataclass(frozen=True)
class Token:
    """A word of a question with its character span (objects keep the question's own spelling)."""

    text: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()


def tokenize(question: str) -> list[Token]:
    """Split into word tokens like Webis-CompQuestions-22 does (punctuation and apostrophes split words)."""
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(question)]


@dataclass(frozen=True)
class QuestionAnalysis:
    """What a question asks for, whether it compares, and what it compares (in question order)."""

    question: str
    type: str
    confidence: float
    comparative: bool
    objects: tuple[str, ...] = ()
    aspect: str | None = None

    def to_json(self) -> dict:
        return {"question": self.question, "type": self.type, "comparative": self.comparative,
                "objects": list(self.objects), "confidence": round(self.confidence, 4), "aspect": self.aspect}


def format_line(a: QuestionAnalysis) -> str:
    """The line `touche classify` prints: type (confidence), comparative with objects and aspect, question."""
    kind = "comparative" if a.comparative else "not comparative"
    if a.objects:
        kind += ": " + " | ".join(a.objects)
    if a.aspect:
        kind += f" (aspect: {a.aspect})"
    return " ".join(f"{a.type:<13} {a.confidence:.2f}  {kind}  <- {a.question}".splitlines())


MAX_QUESTIONS_BYTES = 64 << 20
_LINE_END = re.compile(r"\r\n|\r|\n")  # of a questions file's lines (not U+2028, U+0085, a form feed)
# What a topics.xml opens with: a declaration, a comment or doctype, or a tag (not "<3 Is tea ...").
_MARKUP = re.compile(rb"(?:\xef\xbb\xbf)?\s*<[?!A-Za-z_]")


def given_questions(arguments: list[str], path: Path | None) -> list[str]:
    """The questions `touche classify` reads: its arguments, then those of `path` (`read_questions`), cleaned as a
    run reads a title (`topics.clean_field`: an escape sequence for the terminal was printed as it came) and each at
    most MAX_TOPIC_CHARS long, as a run cuts it (the analysis takes time quadratic in the length)."""
    # Under a C locale without UTF-8 mode, Python holds an argument's UTF-8 bytes as surrogate escapes.
    texts = [question.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for question in arguments]
    texts += read_questions(path) if path else []
    if not texts:
        raise ToucheError(f"{path}: no questions in it" if path else
                          "no questions: pass them as arguments or with --file")
    texts = [clean_field(text) for text in texts]
    if not all(texts):  # nothing but spaces, or U+200B
        raise ToucheError("empty question: every question needs some text")
    if any(len(text) > MAX_TOPIC_CHARS for text in texts):
        log.warning("questions over %d characters are read up to there", MAX_TOPIC_CHARS)
    return [text[:MAX_TOPIC_CHARS] for text in texts]


def read_questions(path: Path) -> list[str]:
    """Questions from a file: the <title>s of a topics.xml (a file that opens with markup, unless named .txt), the
    titles of a queries.jsonl (as a run reads them), else one question per line with text (`visible`); `-` is the
    standard input."""
    path = Path(path)
    stdin = str(path) == "-"
    if stdin and sys.stdin is None:  # `<&-`: Python's stdin is None
        raise ToucheError("--file -: the standard input is closed; pipe the questions in")
    if stdin and sys.stdin.isatty():  # said, or it waits without a word
        log.warning("reading questions from the terminal, one a line; end with Ctrl-D")
    try:
        with (nullcontext(sys.stdin.buffer) if stdin else path.open("rb")) as stream:
            raw = stream.read(MAX_QUESTIONS_BYTES + 1)
    except OSError as e:
        raise ToucheError(f"cannot read questions from {path}: {e.strerror or e}") from e
    if len(raw) > MAX_QUESTIONS_BYTES:  # `--file /dev/zero`, a runaway pipe: it took 23 GB before the OOM killer
        raise ToucheError(f"{path}: more than {MAX_QUESTIONS_BYTES >> 20} MB of questions; split it")
    if path.suffix.lower() == ".jsonl":  # TIREx's queries.jsonl, read as a run reads it
        return [topic.title for topic in read_topics(path)]
    if path.suffix.lower() == ".xml" or path.suffix.lower() != ".txt" and _MARKUP.match(raw):
        root = xml_root(path, raw)
        # Each <topic>'s title as a run reads it (TIREx's queries.xml: <query>, or <original_query>'s <title>);
        # a file without <topic>s, each <title>.
        topics = named(root, "topic")
        titles = [title for title in (map(xml_title, topics) if topics else map(element_text, named(root, "title")))
                  if title]
        if not titles:
            raise ToucheError(f"{path} has no <title> elements")
        return titles
    try:
        text = decoded(raw)
    except UnicodeDecodeError as e:  # the line, where the bytes are UTF-8's (`object`: those after a BOM)
        line = e.object[:e.start].count(b"\n") + 1
        where = f" (line {line}: byte {e.object[e.start]:#04x})" if e.encoding.startswith("utf-8") else ""
        raise ToucheError(f"{path} is not UTF-8 text{where}") from e
    return [line.strip() for line in _LINE_END.split(text) if visible(line)]


# ---------------------------------------------------------------------------------------------------------
# Features (shared by training and inference: both hash feature strings the same way)
# ---------------------------------------------------------------------------------------------------------

def hash_features(features: list[str], bits: int = HASH_BITS) -> np.ndarray:
    """Feature strings to column indices (crc32: stable across processes and Python versions)."""
    mask = (1 << bits) - 1
    return np.fromiter((zlib.crc32(f.encode("utf-8")) & mask for f in features), dtype=np.int64,
                       count=len(features))


def question_features(question: str) -> list[str]:
    """Word 1-3-grams plus the paper's cues: first words, wh-word, yes/no form, 'will', persons, 'or'."""
    words = [t.lower for t in tokenize(question)] or ["<empty>"]
    padded = ["<s>", *words, "</s>"]
    feats = [f"w:{w}" for w in words]
    feats += [f"b:{a}_{b}" for a, b in zip(padded, padded[1:])]
    feats += [f"t:{a}_{b}_{c}" for a, b, c in zip(padded, padded[1:], padded[2:])]
    first = words[0]
    feats += [f"first:{first}", f"first2:{'_'.join(words[:2])}"]
    if first in WH_WORDS:
        feats.append("form:wh")
        if first == "how" and len(words) > 1 and words[1] in {"much", "many"}:
            feats.append("form:how_much")
    elif first in AUXILIARIES:
        feats.append("form:yes_no")
    else:
        feats.append("form:other")
    if "will" in words or "would" in words:
        feats.append("cue:future")
    if PERSONAL.intersection(words):
        feats.append("cue:person")
    if "or" in words:
        feats.append("cue:or")
    if COMPARATIVE_CUES.intersection(words):
        feats.append("cue:comparative")
    if any(w.endswith("est") and len(w) > 5 for w in words):
        feats.append("cue:est")
    feats.append("bias")
    return feats


def token_features(words: list[str], i: int) -> list[str]:
    """Features of the i-th (lower-cased) word for the tagger: the word, its shape and a ±2 window."""
    w = words[i]
    at = lambda j: words[j] if 0 <= j < len(words) else ("<s>" if j < 0 else "</s>")  # noqa: E731
    feats = [f"w:{w}", f"suf3:{w[-3:]}", f"pre2:{w[:2]}", f"len:{min(len(w), 8)}",
             f"w-1:{at(i - 1)}", f"w+1:{at(i + 1)}", f"w-2:{at(i - 2)}", f"w+2:{at(i + 2)}",
             f"w-1w:{at(i - 1)}_{w}", f"ww+1:{w}_{at(i + 1)}", f"w-1w+1:{at(i - 1)}_{at(i + 1)}",
             f"pos:{min(i, 6)}", f"rpos:{min(len(words) - 1 - i, 6)}", "bias"]
    if w.isdigit():
        feats.append("shape:digit")
    left, right = words[:i], words[i + 1:]
    for cue in ("or", "vs", "than", "between", "and"):
        if cue in left:
            feats.append(f"after:{cue}")
        if cue in right:
            feats.append(f"before:{cue}")
    if COMPARATIVE_CUES.intersection(left):
        feats.append("after:cue")
    if COMPARATIVE_CUES.intersection(right):
        feats.append("before:cue")
    return feats


# ---------------------------------------------------------------------------------------------------------
# Object spans: shared post-processing of token tags
# ---------------------------------------------------------------------------------------------------------

ARTICLES = frozenset({"a", "an", "the"})
DETERMINERS = ARTICLES | frozenset({"my", "your", "his", "her", "its", "our", "their", "this", "that", "these",
                                    "those"})
PIVOTS = frozenset({"or", "vs", "versus", "than", "over"})
PREPOSITIONS = frozenset({"for", "in", "at", "to", "of", "on", "with", "by", "from", "during", "about", "as",
                          "when", "while", "if", "and", "until", "till", "among", "amongst", "like"})
# Prepositions that may join a phrase to its object ("immigration through Ellis Island", "jumping into a project"),
# but never open a head that two objects share ("specialize or expand into other fields")
PHRASE_PREPOSITIONS = frozenset({"into", "through", "throughout", "against", "under", "within", "without", "across",
                                 "toward", "towards", "upon", "via", "per", "after", "before", "since", "near",
                                 "out", "up", "off", "down", "away", "back"})
# Verbs of choosing, which begin what is chosen ("buy a Mac or a PC") unless they are the choice ("buy or rent").
CHOICE_VERBS = frozenset({"prefer", "buy", "choose", "use", "take", "learn", "get", "pick"})
# Pronouns that are names when written in capitals: the US, IT, ME (Maine), ...
_NAMELIKE = PERSONAL | frozenset({"it"})
# Prepositions that compare after these words: "How do cigars differ from cigarettes?", "compared to", "same as".
LEADS = {"from": frozenset({"differ", "differs", "differed", "different", "differently", "distinct"}),
         "to": frozenset({"compare", "compared", "compares", "comparison", "similar", "opposed", "preferable",
                          "equal", "equivalent", "identical", "superior", "inferior", "preferred"}),
         "with": frozenset({"compare", "compared", "compares", "comparison"}), "as": frozenset({"same"})}
# Adverbs that end a question, never an object ("Should I learn French or Spanish first?").
TRAILING_ADVERBS = frozenset({"first", "now", "today", "nowadays", "instead", "again", "anymore", "later", "currently",
                              "then", "too", "also", "anyway", "overall", "already", "yet", "still"})
# Comparatives that are seldom nouns ("cleaner", "cooler", "lighter" are left out).
COMPARATIVES = frozenset("""
cheaper safer faster stronger bigger smaller larger harder quicker slower higher greater wider sharper tougher weaker
richer poorer denser longer shorter deeper thicker thinner simpler smarter louder quieter warmer colder hotter newer
younger brighter darker softer smoother nicer fewer lesser fresher kinder older taller healthier easier tastier
heavier riskier pricier costlier earlier happier noisier sturdier roomier busier lazier scarier trendier prettier
uglier dirtier funnier friendlier wealthier crazier""".split())
_COMPARING = COMPARATIVE_CUES | COMPARATIVES  # any word that compares
ADJECTIVE_ENDINGS = ("ing", "ive", "ous", "able", "ible", "ful", "ant", "ent", "al", "ic", "less")
# Words that never start or end an object: function words, choice verbs and comparison cues.
EDGE_WORDS = (ARTICLES | PREPOSITIONS | COMPARATIVE_CUES | AUXILIARIES | PERSONAL | WH_WORDS | PIVOTS | CHOICE_VERBS
              | frozenset().union(*LEADS.values())
              | frozenset({"it", "one", "ones", "between", "really", "better", "very", "much", "so", "even", "any",
                           "there", "sometimes", "usually", "often", "always", "generally", "actually", "vice",
                           "versa", "preferred", "be", "been", "being", "significantly", "slightly",
                           "considerably", "substantially", "truly", "definitely", "far", "then",
                           "think", "believe", "feel", "reckon", "guess", "suppose"}))
# Sentence adverbs that open a question before a comma or a name ("Honestly, Bank of America or Chase?"), where they
# are no part of the first object; elsewhere they may be ("Personally identifiable data or anonymous data?").
OPENING_ADVERBS = frozenset({"honestly", "seriously", "frankly", "personally", "basically", "ultimately",
                             "realistically", "objectively", "truthfully", "hypothetically", "theoretically"})
_CONTRACTED = {"won": "will", "ain": "is", "can": "can"}  # "won't", "ain't", "can't"; else "isn't" -> "is"
_MODEL_NUMBER = re.compile(r"[a-z]+\d\w*|\d+[a-z]\w*")  # "G35", "S10", "4K", "i7": a name's, not a shared head
_BREAK = re.compile(r"[,:;?!()\[\]]")
_DASH = re.compile(r"\s[-\u2013\u2014]|[-\u2013\u2014]\s")  # a dash between words ("RAM - Windows 7"), not "Coca-Cola"
_SENTENCE_END = re.compile(r"[.!?]")
_OPENING_SIGNS = frozenset(".$€£#@")  # signs that open a name but no word (\w) holds


def spans_of(tags: list[str], tag: str) -> list[tuple[int, int]]:
    """Maximal runs [start, end) of `tag`."""
    runs, start = [], None
    for i, t in enumerate([*tags, "O"]):
        if t == tag and start is None:
            start = i
        elif t != tag and start is not None:
            runs.append((start, i))
            start = None
    return runs


class ObjectSpans:
    """Compared objects from token tags, robust to what the (punctuation-free, lower-cased) training data lacks.

    OBJ runs are cut at punctuation and at the pivots ("or", "vs", "versus", "than", "over"; "differ from",
    "compared to", "same as"), trimmed of function words and trailing prepositional phrases; the runs either side of
    a comparison pivot are the objects. When the tags miss one side, the content words next to the pivot are taken
    ("Why is Linux better than Windows?"); a phrase that the comparison opens before "than" is the aspect ("Is
    Python better for data science than R?"). An elided head is restored ("steel or ceramic knives" -> "steel
    knives", "ceramic knives"); names joined by "of" stay whole ("Bank of America").
    """

    def __init__(self, question: str, tokens: list[Token]):
        self.question = question
        self.tokens = tokens
        self.words = [t.lower for t in tokens]
        for i in range(1, len(tokens)):  # "Aren't cats ...": the verb and "not", no part of an object
            if self.words[i] == "t" and question[tokens[i - 1].end:tokens[i].start] in ("'", "\u2019"):
                verb = self.words[i - 1]
                self.words[i - 1:i + 1] = [_CONTRACTED.get(verb, verb.removesuffix("n")), "not"]
        self.breaks = {i for i in range(1, len(tokens)) if _BREAK.search(
            between := question[tokens[i - 1].end:tokens[i].start]) or _DASH.search(between)}
        if "than" not in self.words:  # "better then", "better for beginners then": "than" mistyped
            for i in range(2, len(tokens)):
                if self.words[i] == "then" and self.words[i - 1] not in ("more", "less") and any(
                        w in _COMPARING for w in self.words[max(0, i - 6):i]) \
                        and not any(max(1, i - 6) <= b <= i for b in self.breaks):
                    self.words[i] = "than"
        # the word before "than" is the comparison itself ("healthier than", "more readable than") where it reads as
        # one; where the comparison came before it is the first object ("healthier to drink tea than coffee")
        self.cues = {i - 1 for i, w in enumerate(self.words) if w == "than" and i and self.comparison(i - 1)}
        # and "fuel" in "more fuel efficient than"
        self.cues |= {c - 1 for c in self.cues if c > 1 and self.words[c - 2] in ("more", "less")
                      and self.words[c].endswith(ADJECTIVE_ENDINGS)}
        # a question whose function words are mostly capitalised is written in title case: its capitals name nothing
        inner = [i for i in range(1, len(tokens)) if self.words[i] in EDGE_WORDS and self.words[i] != "i"
                 and not self.opens_sentence(i)]
        self.titled = sum(tokens[i].text[:1].isupper() for i in inner) * 2 > len(inner)
        # a pronoun written in capitals, where most words are not, is a name ("the US", "IT"); other words in
        # capitals are emphasis ("Is coffee BETTER than tea?") and stay what they are
        shouted = sum(t.text.isupper() for t in tokens if len(t.text) > 1) * 2 > sum(len(t.text) > 1 for t in tokens)
        self.plain = not (shouted or self.titled)  # capitals that may mark names
        self.names = self._names(shouted) | self._named_negations()

    def _named_negations(self) -> set[int]:
        """A capitalised "Not" or contraction within a plain question, before a capitalised word, opens a name
        ("Is Not Fade Away ...", "Is Don't Starve better than Terraria?", "Can't Stop Won't Stop"): no negation."""
        named = set()
        if not self.plain:
            return named
        for i, word in enumerate(self.words):
            if word != "not" or i + 1 >= len(self.tokens) or not self.tokens[i + 1].text[:1].isupper():
                continue
            first = i - 1 if self.tokens[i].text == "t" else i  # "Don" of "Don't"
            if first > 0 and self.words[first - 1] in WH_WORDS:  # "Why Isn't Python faster ...": the question's verb
                continue
            if first > 0 and self.tokens[first].text[:1].isupper() and not self.opens_sentence(first):
                named |= {first, i}
        return named

    def _names(self, shouted: bool) -> set[int]:
        """The words that name something though they read as function words: a pronoun in capitals ("the US",
        "IT"; none where the question is `shouted`), a capital "A" ("plan A"), "One" and "I" closing a name."""
        question, tokens = self.question, self.tokens
        names = set() if shouted else {i for i, t in enumerate(tokens)
                                       if len(t.text) > 1 and t.text.isupper() and t.lower in _NAMELIKE}
        # a capital "A" after a lowercase head word ("plan A", "vitamin A") or before the comparison ("Is A better
        # than B?", "Plan A or plan B?") names something; elsewhere it is the article, in capitals in a title-cased
        # question ("What Is Better: A Mac Or A PC?") or opening a sentence
        names |= {i for i, t in enumerate(tokens) if t.text == "A" and (0 < i and i not in self.breaks
                  and not _SENTENCE_END.search(question[tokens[i - 1].end:t.start])
                  and (tokens[i - 1].text.islower() and self.words[i - 1] not in EDGE_WORDS
                       or i + 1 == len(tokens) or self.words[i + 1] in PIVOTS | COMPARATIVE_CUES)
                  or i == 0 and 1 < len(tokens) and self.words[1] in PIVOTS)}  # "A or B?"
        # so do "One" after a capitalised word ("Xbox One") and "I" closing a name ("Napoleon I or Napoleon III",
        # "World War I"; not "Should I", "Honestly I think", "Python or Java I think")
        names |= {i for i, t in enumerate(tokens) if t.text in ("One", "I") and 0 < i and i not in self.breaks
                  and tokens[i - 1].text[:1].isupper() and self.words[i - 1] not in AUXILIARIES | WH_WORDS
                  and (t.text == "One" or i + 1 == len(tokens) or i + 1 in self.breaks
                       or self.words[i + 1] in PIVOTS or not self.opens_sentence(i - 1)
                       and tokens[i - 2].text[:1].isupper() and self.words[i - 2] not in EDGE_WORDS)}
        return names

    def opens_sentence(self, i: int) -> bool:
        return i == 0 or i in self.breaks or bool(
            _SENTENCE_END.search(self.question[self.tokens[i - 1].end:self.tokens[i].start]))

    def comparison(self, i: int, look_back: bool = True) -> bool:
        """Whether word i reads as (part of) a comparison: a cue ("better"), a comparative ("healthier"), "rather", a
        word after "more" / "less", another word in -er where no comparison came before it and no determiner or "to"
        opens it ("a teacher", "to consider", "healthier to eat butter" compare nothing), or a word after one of
        these ("better pets than")."""
        word, before = self.words[i], self.words[i - 1] if i else ""
        compared_before = any(w in _COMPARING for w in self.words[:i])
        return (word in _COMPARING or word == "rather" or before in ("more", "less")
                or word.endswith("er") and len(word) > 3 and before not in DETERMINERS | {"to"}
                and not compared_before
                or look_back and i > 0 and self.comparison(i - 1, look_back=False))

    def edge(self, i: int) -> bool:
        return (self.words[i] in EDGE_WORDS or i in self.cues or i == 0 and self.opening_adverb()
                or self.negation(i)) and i not in self.names

    def opening_adverb(self) -> bool:
        """Whether the first word is a sentence adverb before a comma or a capitalised word (OPENING_ADVERBS)."""
        return self.words[0] in OPENING_ADVERBS and len(self.tokens) > 1 and (
            1 in self.breaks or self.tokens[1].text[:1].isupper())

    def text(self, s: int, e: int) -> str:
        """The question's own text of tokens s..e, with a sign opening the first word (".NET", "$100", "#MeToo")."""
        start = self.tokens[s].start
        if start and self.question[start - 1] in _OPENING_SIGNS and (start == 1 or self.question[start - 2].isspace()):
            start -= 1
        return " ".join(self.question[start:self.tokens[e - 1].end].split())

    def joined(self, i: int) -> bool:
        """Whether token i is one word with the token before it ("Coca-Cola", "TCP/IP": no space between)."""
        if not 0 < i < len(self.tokens) or self.tokens[i - 1].end != self.tokens[i].start - 1 \
                or self.words[i] in PIVOTS or self.words[i - 1] in PIVOTS:  # "PC-vs-Mac" compares two
            return False
        between = self.question[self.tokens[i].start - 1]
        return not between.isspace() and not _BREAK.match(between)

    def bridge(self, i: int) -> int:
        """The words ("of", "of the") from i on that join two capitalised words into one name ("Bank of America",
        "Lord of the Rings"), or 0: not in a question written in title case."""
        if self.titled or self.words[i] != "of" or not self.capital(i - 1):
            return 0
        n = 2 if i + 2 < len(self.words) and self.words[i + 1] == "the" else 1
        return n if i + n < len(self.words) and self.capital(i + n) and not any(
            b in self.breaks for b in range(i, i + n + 1)) else 0

    def capital(self, i: int) -> bool:
        """Whether word i is a capitalised word and no function word ("Bank", not "The")."""
        return 0 <= i < len(self.words) and self.tokens[i].text[:1].isupper() and not self.edge(i)

    def word(self, span: tuple[int, int]) -> tuple[int, int]:
        """A span grown to whole words and names: "AT&T" where the tags found "T", "University of Michigan" where
        they found "Michigan", "Star Wars" where they found "Wars" (up to three capitalised words either side of a
        capitalised span, where capitals may mark names)."""
        s, e = span
        while self.joined(s):
            s -= 1
        while self.joined(e):
            e += 1
        if e < len(self.words) and (joining := self.bridge(e)):
            e += joining + 1
        s -= next((n + 1 for n in (1, 2) if s - n > 0 and self.bridge(s - n) == n), 0)
        if any(self.bridge(i) for i in range(s, e)) or self.plain and self.capital(s):
            for _ in range(3):
                if s > 0 and self.capital(s - 1) and s not in self.breaks:
                    s -= 1
                if e < len(self.words) and self.capital(e) and e not in self.breaks:
                    e += 1
        return s, e

    def pivots(self) -> list[int]:
        found = [i for i, w in enumerate(self.words) if 0 < i < len(self.words) - 1
                 and (w in PIVOTS or self.words[i - 1] in LEADS.get(w, ()))]
        if "between" in self.words:
            b = self.words.index("between")
            found += [i for i, w in enumerate(self.words) if w == "and" and b + 1 < i < len(self.words) - 1][:1]
        return sorted(found)

    def trim(self, s: int, e: int) -> tuple[int, int]:
        """The span without function words at its edges, cut before a preposition or pivot; a "not" goes where it
        negates a verb before the object ("Aren't cats ...", "Is tea not ..."), not where it is the object's own ("or
        not coffee") or the whole object ("or not")."""
        while s < e and (self.edge(s) or self.words[s] == "s"):
            s += 1
        i = s + 1
        while i < e:
            if joining := self.bridge(i):  # "Bank of America"
                i += joining + 1
                continue
            if self.words[i] in PREPOSITIONS or self.words[i] in PIVOTS:
                e = i
                break
            i += 1
        while e > s and (self.edge(e - 1) or self.words[e - 1] == "not" and e - 1 > s):
            e -= 1
        return s, e

    def negation(self, i: int) -> bool:
        """Whether word `i` is a "not" that negates a verb or a comparison ("Isn't tea ...", "tea not better"), no
        part of an object."""
        return self.words[i] == "not" and (i > 0 and self.words[i - 1] in AUXILIARIES or i + 1 < len(self.words)
                                           and (self.words[i + 1] in _COMPARING or i + 1 in self.cues))

    def pieces(self, tags: list[str]) -> list[tuple[int, int]]:
        cuts = self.breaks | {i for i, w in enumerate(self.words) if w in PIVOTS}
        out = []
        for s, e in spans_of(tags, "OBJ"):
            bounds = [s, *sorted(c for c in cuts if s < c < e), e]
            for a, b in zip(bounds, bounds[1:]):
                a += self.words[a] in PIVOTS
                a, b = self.trim(a, b)
                if a < b:
                    out.append((a, b))
        return out

    def walk(self, pivot: int, step: int) -> tuple[int, int] | None:
        """Content words next to a pivot, skipping cue words and articles (at most three: "really any better
        than") first."""
        i, skipped = pivot + step, 0
        while 0 <= i < len(self.words) and self.edge(i) and skipped < 3:
            if (i if step > 0 else i + 1) in self.breaks:
                return None
            i, skipped = i + step, skipped + 1
        j = i
        while 0 <= j < len(self.words) and not self.edge(j):
            j += step
            if (j if step > 0 else j + 1) in self.breaks:
                break
        lo, hi = (i, j) if step > 0 else (j + 1, i + 1)
        return (lo, hi) if lo < hi else None

    def choice(self, i: int) -> tuple[int, int] | None:
        """A verb of choosing next to a pivot where nothing else is: itself the object ("Should I buy or rent?")."""
        return (i, i + 1) if self.words[i] in CHOICE_VERBS else None

    def compared_at(self, pivot: int) -> int | None:
        """Where a comparison opens a phrase that ends at "than": "better" in "Is Python better for data science
        than R?" (the first object comes before it, the phrase is the aspect)."""
        for k in range(pivot - 2, max(0, pivot - 10), -1):
            if k + 1 in self.breaks or self.words[k + 1] in PIVOTS:
                return None
            word = self.words[k]
            if self.words[k + 1] in PREPOSITIONS and (word in _COMPARING or self.words[k - 1] in ("more", "less")):
                # "is it better for the economy to raise taxes than ...": nothing compared comes before it
                return None if {"it", "there"} & set(self.words[max(0, k - 3):k]) else k
        return None

    def first_object(self, pieces: list[tuple[int, int]], end: int) -> tuple[int, int] | None:
        """The object that ends before word `end` (a pivot or a comparison)."""
        left = [pc for pc in pieces if pc[1] <= end and all(self.edge(i) for i in range(pc[1], end))
                and not any(pc[1] < b <= end for b in self.breaks)]
        return left[-1] if left else self.walk(end, -1) or self.choice(end - 1)

    def objects(self, tags: list[str]) -> tuple[str, ...]:
        pieces = self.pieces(tags)
        for p in self.pivots():
            right = [pc for pc in pieces if pc[0] > p and all(self.edge(i) for i in range(p + 1, pc[0]))
                     and not any(p < b <= pc[0] for b in self.breaks)]
            second = right[0] if right else self.walk(p, +1) or self.choice(p + 1)
            # "higher than that of MIT", "than those in Sweden": the pronoun stands for the aspect, the name follows
            if second and second[1] - second[0] == 1 and self.words[second[0]] in ("that", "those") \
                    and second[1] < len(self.words) and self.words[second[1]] in PREPOSITIONS:
                second = self.walk(second[1], +1) or second
            # "to rent or buy a house", "should I lease or buy a car": the verb chosen opens the second
            if second and second[0] > p + 1 and self.words[p + 1] in CHOICE_VERBS and p > 1 \
                    and self.words[p - 1] not in EDGE_WORDS and self.words[p - 2] in PERSONAL | {"to"}:
                second = (p + 1, second[1])
            # the phrase the comparison opens is the aspect, unless it ends in the second's head ("better in a
            # ceramic vase than a crystal vase")
            compared = self.compared_at(p) if self.words[p] == "than" and second \
                and self.words[p - 1] != self.words[second[1] - 1] else None
            first = compared is not None and self.first_object(pieces, compared) or self.first_object(pieces, p)
            if first and self.words[0] in ("do", "does", "did") and first[1] - first[0] > 1 \
                    and first[1] < len(self.words) and self.words[first[1]] not in PIVOTS \
                    and (first[1] in self.cues or self.comparison(first[1], False)):
                first = (first[0], first[1] - 1)  # "Do dogs make better pets than cats?": "make" is the verb
            if first and second:
                pair = self.restore_head(self.opening(self.word(self.untail(first))), self.word(self.untail(second)), p)
                listed = self.listed(pieces, first) if self.words[p] != "than" else []
                return _unique([*(self.text(*piece) for piece in listed), *pair])
        return _unique(self.text(*self.untail(piece)) for piece in pieces)

    def listed(self, pieces: list[tuple[int, int]], first: tuple[int, int]) -> list[tuple[int, int]]:
        """The objects listed before the first with commas, in order: "apples, oranges or bananas" names three (the
        first was dropped, and a run compared the last two). Each opens the question or follows a break, and holds
        no comparison ("Which is healthier, tea or coffee?", "In 2020, iPhone or Android?" list nothing)."""
        listed, start = [], first[0]
        while start in self.breaks and self.between(start) == ",":
            before = next((piece for piece in pieces if piece[1] == start), None)
            if before is None or not (before[0] == 0 or before[0] in self.breaks) or any(
                    self.words[i] in EDGE_WORDS or self.words[i] in COMPARATIVES for i in range(*before)):
                break
            listed.insert(0, before)
            start = before[0]
        return listed

    def between(self, word: int) -> str:
        """What stands between word `word` and the one before it, spaces aside."""
        return self.question[self.tokens[word - 1].end:self.tokens[word].start].strip()

    def untail(self, span: tuple[int, int]) -> tuple[int, int]:
        """A span without the adverbs and comparatives that end a question ("French or Spanish first?", "Is butter
        or margarine healthier?", "Is rice or pasta more fattening?")."""
        s, e = span
        if e == len(self.words) and e - s > 2 and self.words[e - 2] in ("more", "less") \
                and self.words[e - 1].endswith(ADJECTIVE_ENDINGS):  # "more fattening", not "more courses"
            e -= 2
        while e - s > 1 and (self.words[e - 1] in TRAILING_ADVERBS or self.words[e - 1] in COMPARATIVES):
            e -= 1
        return s, e

    def opening(self, first: tuple[int, int]) -> tuple[int, int]:
        """A first object the question opens with, whole: the words before it, where none is a function word
        or a break, belong to it ("green tea vs coffee", "Coca-Cola or Pepsi": the tags miss opening words)."""
        s, e = first
        if 0 < s and not any(self.edge(i) for i in range(s)) and not any(b <= s for b in self.breaks):
            return 0, e
        return first

    def restore_head(self, first: tuple[int, int], second: tuple[int, int], pivot: int) -> tuple[str, ...]:
        """An elided head restored: "steel or ceramic knives" -> "steel knives", "ceramic knives". Not where the
        second object is a name ("Real Madrid", "Windows 10": a capitalised word, then another or a number; an
        acronym, then a word in title case: "HBO Max", not "AMD CPU" nor "LCD Displays") or a
        word written with a hyphen or slash ("T-Mobile", "TCP/IP"; then its own head: "non-biodegradable wastes"),
        nor where it has a determiner of its own and the first has none or is a name ("Haskell or a simpler
        language", "an iPhone or an Android phone"; but "a real or a fake Christmas tree"), nor onto a first object
        that holds the head or the second's opening word ("where clause or having clause", "quicksort or merge sort",
        "Disneyland or Disney World"), nor where the second holds a model number ("BMW or Infinity G35"), goes on
        with a preposition or particle ("fall or wait until spring", "cook at home or eat out") or opens with a verb
        of choosing ("college or learn a trade").
        """
        texts = [self.text(*first), self.text(*second)]
        (s1, e1), (s2, e2) = first, second
        tail = next((i for i in range(s2 + 1, e2) if not self.joined(i)), e2)
        # an acronym opening a name ("HBO Max", "AMD Ryzen", "AWS Lambda") where a title-cased word follows it;
        # not "AMD CPU", whose head is an acronym too, nor a plural head ("LCD Reception Displays")
        opener, follower = self.tokens[s2].text, self.tokens[tail].text if tail < e2 else ""
        name = tail < e2 and opener[:1].isupper() and (not opener.isupper() or follower[:1].isupper()
                                                         and not follower.isupper() and self.plain
                                                         and not self.words[e2 - 1].endswith("s")) \
            and (self.tokens[tail].text[:1].isupper() or self.tokens[tail].text.isdigit()) \
            or any(_MODEL_NUMBER.fullmatch(self.words[i]) for i in range(tail, e2))
        capitals = sum(t.text != t.lower for t in self.tokens)  # a name has some where most words have none
        own_determiner = any(self.words[i] in DETERMINERS for i in range(pivot + 1, s2)) and (
            s1 == 0 or self.words[s1 - 1] not in DETERMINERS
            or self.tokens[s1].text != self.words[s1] and capitals * 2 < len(self.tokens))
        repeated = any(len(w) > 2 and f(w) for f, w in ((self.words[s1].endswith, self.words[e2 - 1]),
                                                         (self.words[s1].startswith, self.words[s2])))
        phrase = any(self.words[i] in PREPOSITIONS or self.words[i] in PHRASE_PREPOSITIONS for i in range(tail, e2)) \
            or self.words[s2] in CHOICE_VERBS
        if e1 - s1 == 1 and tail < e2 and e1 == pivot and self.words[pivot] != "than" \
                and not (name or own_determiner or repeated or phrase):
            texts[0] = f"{texts[0]} {self.text(tail, e2)}"
        return _unique(texts)


_TWO_SENTENCES = re.compile(r"[.?!]\s+\w")  # "Node.js or Deno?" is one sentence
_CLOSING_WORDS = COMPARATIVES | {"better", "worse"}


def _choice(text: str, shortest: int, longest: int) -> tuple[ObjectSpans, list[int]] | None:
    """The object spans of a question between two, and where "or" / "vs" / "versus" stand in it: a question of one
    sentence of `shortest` to `longest` words, without commas or colons (else None)."""
    tokens = tokenize(text)
    if not shortest <= len(tokens) <= longest or _TWO_SENTENCES.search(text):
        return None
    spans = ObjectSpans(text, tokens)
    if spans.breaks:
        return None
    return spans, [i for i in spans.pivots() if spans.words[i] in ("or", "vs", "versus")]


def alternative(question: str) -> bool:
    """A bare alternative question, "Python or Java?", "Suitcases: hard or soft?": at most six words (after a
    label and colon), one sentence, opening with content words either side of "or" / "vs" / "versus". It compares
    by its form, but the data the comparative head learns from hardly holds such short questions (0.2-0.3)."""
    choice = _choice(question.split(":", 1)[1] if question.count(":") == 1 else question, 3, 6)
    if choice is None or not choice[1]:
        return False
    spans, (pivot, *_) = choice
    return (not any(spans.edge(i) for i in range(pivot))
            and spans.walk(pivot, -1) is not None and spans.walk(pivot, +1) is not None)


def closing_comparison(question: str) -> bool:
    """A yes/no question between two that a comparative closes, "Is butter or margarine healthier?", "Is rice or
    pasta more fattening?", or opens, "Is it safer to fly or drive?": the comparative head's data holds few such
    questions, and it calls most not comparative. One sentence of 4-12 words opening with an auxiliary, one "or" /
    "vs" / "versus", no commas or colons."""
    choice = _choice(question, 4, 12)
    if choice is None or len(choice[1]) != 1:
        return False
    words, pivot = choice[0].words, choice[1][0]
    return words[0] in AUXILIARIES and (words[-1] in _CLOSING_WORDS
                                        or words[-2] in ("more", "less") and len(words) - 2 > pivot + 1
                                        or words[1] == "it" and words[2] in _CLOSING_WORDS and words[3] == "to")


def _unique(texts) -> tuple[str, ...]:
    seen, out = set(), []
    for t in texts:
        if t.lower() not in seen:
            seen.add(t.lower())
            out.append(t)
    return tuple(out)


def objects_from_tags(question: str, tokens: list[Token], tags: list[str]) -> tuple[tuple[str, ...], str | None]:
    """Object strings (see ObjectSpans) and the aspect (the ASP-tagged words) of a tagged question."""
    objects = ObjectSpans(question, tokens).objects(tags)
    aspect = " ".join(question[tokens[s].start:tokens[e - 1].end] for s, e in spans_of(tags, "ASP")) or None
    return objects, aspect


# ---------------------------------------------------------------------------------------------------------
# Classifiers
# ---------------------------------------------------------------------------------------------------------

class QuestionClassifier(ABC):
    """Analyses questions; subclasses say how."""

    @abstractmethod
    def analyze(self, question: str) -> QuestionAnalysis:
        """Type, comparativeness and objects of one question."""

    @abstractmethod
    def extract_objects(self, question: str) -> tuple[tuple[str, ...], str | None]:
        """The compared objects and the aspect, for a question already known to be comparative."""

    def analyses(self, questions: list[str]) -> Iterator[QuestionAnalysis]:
        """The questions' analyses in order, each as soon as it is made (`touche classify` prints them so)."""
        return (self.analyze(q) for q in questions)

    def analyze_many(self, questions: list[str]) -> list[QuestionAnalysis]:
        return list(self.analyses(questions))


def rule_type(question: str) -> str:
    """The paper's baseline: a wh-first question is factual, except how -> method and why -> argumentative;
    any other first word -> argumentative."""
    words = [t.lower for t in tokenize(question)]
    first = words[0] if words else ""
    if first == "how":
        return "method"
    if first == "why":
        return "argumentative"
    return "factual" if first in WH_WORDS else "argumentative"


class RuleClassifier(QuestionClassifier):
    """The paper's rule-based type baseline plus cue-word rules for comparisons and "X or/vs/than Y" objects."""

    def analyze(self, question: str) -> QuestionAnalysis:
        tokens = tokenize(question)
        words = [t.lower for t in tokens]
        comparative = bool(COMPARATIVE_CUES.intersection(words) or "or" in words
                           or any(w.endswith("est") and len(w) > 5 for w in words))
        objects = self.extract_objects(question)[0] if comparative else ()
        return QuestionAnalysis(question, rule_type(question), 1.0, comparative, objects)

    def extract_objects(self, question: str) -> tuple[tuple[str, ...], str | None]:
        tokens = tokenize(question)
        return objects_from_tags(question, tokens, ["O"] * len(tokens))

    @staticmethod
    def object_tags(words: list[str]) -> list[str]:
        """OBJ on the content words either side of the first pivot ("or", "vs", "than", "compared to", ...; or
        "between X and Y")."""
        spans = ObjectSpans(" ".join(words), tokenize(" ".join(words)))
        tags = ["O"] * len(words)
        for p in spans.pivots()[:1]:
            for side in (spans.walk(p, -1), spans.walk(p, +1)):
                if side:
                    tags[side[0]:side[1]] = ["OBJ"] * (side[1] - side[0])
        return tags


class HashedHead:
    """A logistic regression over hashed features: `weights` (classes x 2^bits, or one row for binary)."""

    def __init__(self, weights: np.ndarray, bias: np.ndarray):
        self.weights = weights
        self.bias = bias

    def scores(self, indices: np.ndarray) -> np.ndarray:
        return self.weights[:, indices].sum(axis=1) + self.bias

    def probability(self, indices: np.ndarray) -> float:
        """P(positive class) of a binary head."""
        return float(expit(self.scores(indices)[0]))


class DenseHead:
    """A binary logistic regression over sentence embeddings: `weights` (one per dimension) and `bias`."""

    def __init__(self, weights: np.ndarray, bias: float):
        self.weights = weights
        self.bias = bias

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """P(positive class) of each row of `vectors`."""
        return expit(vectors @ self.weights + self.bias)


def head_probabilities(head: tuple[HashedHead, DenseHead], indices: list[np.ndarray],
                       vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(positive) of each question by a decision's n-gram head and by its embedding head (`indices`: the
    questions' hashed features, `vectors`: their embeddings)."""
    hashed, dense = head
    return np.array([hashed.probability(found) for found in indices]), dense.probabilities(vectors)


def decision(parts: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """A decision's P(positive) from its two heads' (`head_probabilities`): their mean, as runs decide."""
    return np.mean(parts, axis=0)


class Tagger:
    """Per-token multinomial logistic regression, decoded with Viterbi over tag-transition log-probabilities
    (scaled down in training: `app.training.questions.TRANSITION_WEIGHT`)."""

    def __init__(self, head: HashedHead, transitions: np.ndarray, start: np.ndarray):
        self.head = head
        self.transitions = transitions
        self.start = start

    def tag(self, words: list[str]) -> list[str]:
        if not words:
            return []
        emissions = np.stack([self.head.scores(hash_features(token_features(words, i)))
                              for i in range(len(words))])
        emissions = emissions - np.logaddexp.reduce(emissions, axis=1, keepdims=True)
        best = self.start + emissions[0]
        back = []
        for row in emissions[1:]:
            step = best[:, None] + self.transitions
            back.append(step.argmax(axis=0))
            best = step.max(axis=0) + row
        path = [int(best.argmax())]
        for pointers in reversed(back):
            path.append(int(pointers[path[-1]]))
        return [TAGS[t] for t in reversed(path)]

    def objects(self, question: str) -> tuple[tuple[str, ...], str | None]:
        """The compared objects and the aspect of a question, as its tags show them."""
        tokens = tokenize(question)
        return objects_from_tags(question, tokens, self.tag([t.lower for t in tokens]))


class ModelClassifier(QuestionClassifier):
    """The learned classifier: comparative and argumentative heads, each over n-grams and over the embedding (their
    probabilities averaged), plus the object tagger. Questions are embedded on `device` at `precision`."""

    def __init__(self, comparative: tuple[HashedHead, DenseHead], argumentative: tuple[HashedHead, DenseHead],
                 tagger: Tagger, threshold: float = 0.5, device: str = "auto", precision: str = "auto"):
        self.comparative = comparative
        self.argumentative = argumentative
        self.tagger = tagger
        self.threshold = threshold
        self.device, self.precision = device, precision

    @classmethod
    def load(cls, model_dir: Path = MODELS_DIR, device: str = "auto", precision: str = "auto") -> "ModelClassifier":
        weights_path, settings_path = model_dir / WEIGHTS_FILE, model_dir / SETTINGS_FILE
        if not weights_path.is_file() or not settings_path.is_file():
            raise ToucheError(f"question model missing in {model_dir}; train it with `touche train questions`")
        settings = json.loads(settings_path.read_text())
        if settings.get("hash_bits") != HASH_BITS or tuple(settings.get("tags", ())) != TAGS:
            raise ToucheError(f"{settings_path} was trained with other features; retrain it")
        with np.load(weights_path) as z:
            arrays = {k: z[k].astype(np.float32) for k in z.files}
        if "comparative_dense_w" not in arrays:
            raise ToucheError(f"{weights_path} has no embedding heads; retrain it with `touche train questions`")
        heads = {name: (HashedHead(arrays[f"{name}_w"], arrays[f"{name}_b"]),
                        DenseHead(arrays[f"{name}_dense_w"], float(arrays[f"{name}_dense_b"])))
                 for name in ("comparative", "argumentative")}
        return cls(heads["comparative"], heads["argumentative"],
                   Tagger(HashedHead(arrays["tagger_w"], arrays["tagger_b"]), arrays["transitions"],
                          arrays["start"]),
                   threshold=float(settings.get("comparative_threshold", 0.5)), device=device, precision=precision)

    def analyze(self, question: str) -> QuestionAnalysis:
        return self.analyze_many([question])[0]

    def analyses(self, questions: list[str]) -> Iterator[QuestionAnalysis]:
        """The questions embedded in batches of EMBEDDED_AT_ONCE, each batch's analyses given when it is done (a
        topics file's titles in one; a file of a million questions in bounded memory, with a progress bar: about 4 ms
        a question on 2 cores)."""
        starts = range(0, len(questions), EMBEDDED_AT_ONCE)
        for start in tqdm(starts, desc="questions", unit="batch", disable=len(starts) < 2 or None):
            batch = questions[start:start + EMBEDDED_AT_ONCE]
            indices = [hash_features(question_features(q)) for q in batch]
            vectors = encode(batch, device=self.device, precision=self.precision)
            p_comparative = self.probabilities(self.comparative, indices, vectors)
            p_argumentative = self.probabilities(self.argumentative, indices, vectors)
            yield from (self._analysis(*args) for args in zip(batch, p_comparative, p_argumentative))

    @staticmethod
    def probabilities(head: tuple[HashedHead, DenseHead], indices: list[np.ndarray],
                      vectors: np.ndarray) -> np.ndarray:
        """The mean of the n-gram head's and the embedding head's probabilities, per question (`decision`)."""
        return decision(head_probabilities(head, indices, vectors))

    def _analysis(self, question: str, p_comparative: float, p_argumentative: float) -> QuestionAnalysis:
        p_comparative, p_argumentative = float(p_comparative), float(p_argumentative)
        if _METHOD.match(question):
            kind, confidence = "method", 1.0  # a rule decision, as in RuleClassifier: no probability to give
        elif p_argumentative >= 0.5:
            kind, confidence = "argumentative", p_argumentative
        else:
            kind, confidence = "factual", 1.0 - p_argumentative
        comparative = p_comparative >= self.threshold or alternative(question) or closing_comparison(question)
        objects, aspect = self.extract_objects(question) if comparative else ((), None)
        return QuestionAnalysis(question, kind, confidence, comparative, objects, aspect)

    def extract_objects(self, question: str) -> tuple[tuple[str, ...], str | None]:
        return self.tagger.objects(question)


def load_classifier(method: str = "model", device: str = "auto", precision: str = "auto") -> QuestionClassifier:
    """`model` (learned, the default; questions embedded on `device` at `precision`) or `rules` (the paper's
    baseline)."""
    if method == "rules":
        return RuleClassifier()
    if method == "model":
        return ModelClassifier.load(device=device, precision=precision)
    raise ToucheError(f"unknown question classifier {method!r}; choose 'model' or 'rules'")


class TopicTask(NamedTuple):
    """The run's stance label set (controversial or comparative), its topics and each topic's question analysis."""

    task: str
    topics: list[Topic]
    analyses: dict[str, QuestionAnalysis]


def topic_task(topics: list[Topic], override: str | None = None, device: str = "auto",
               precision: str = "auto", stated: bool = False) -> TopicTask:
    """The run's stance label set (`stance.task_kind`; `stated`: the documents state PRO / CON stances), its topics
    (comparative ones with their objects) and each topic's question analysis, by topic number; the question
    classifier reads all titles at once (embedded on `device` at `precision`, as the run's texts are)."""
    questions = load_classifier(device=device, precision=precision)
    analyses = dict(zip((topic.number for topic in topics), questions.analyze_many([t.title for t in topics])))
    task = stance.task_kind(topics, override, lambda topic: analyses[topic.number].comparative, stated)
    if task == "comparative":
        topics = [with_objects(topic, analyses[topic.number]) for topic in topics]
    return TopicTask(task, topics, analyses)


def with_objects(topic: Topic, analysis: QuestionAnalysis) -> Topic:
    """A topic without <objects> (2020/21 Task 2) in a comparative run gets the objects its question names, where
    the classifier reads it as a comparison ("Should school uniforms be mandatory?" named "school uniforms" and
    "mandatory"), and where they pass the checks <objects> passes (`topics.parse_objects`: "Which is better: this or
    that?" gave sides toward "that")."""
    if topic.objects is not None:
        return topic
    # The first two it names that are two objects ("tea, teas or coffee": tea and coffee)
    pairs = itertools.combinations(analysis.objects, 2) if analysis.comparative else ()
    objects = next((pair for pair in map(parse_objects, pairs) if pair is not None), None)
    if objects is None:
        log.warning("topic %s: no two compared objects found in %s", topic.number, topic.quoted)
        return topic
    return replace(topic, objects=objects)
