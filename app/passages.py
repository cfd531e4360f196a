"""Long documents become passages: sentence-bounded windows of about the size of a Touché 2022 passage.

Every model here was trained on passages (Touché 2022 Task 2: median 144 words, 9% over 200) and reads at most 256
word pieces, but web pages and debate posts run to thousands of words and open with menus. Cutting a document into
windows lets each stage read the parts that matter (`app.pipeline` picks which) instead of the first 256 pieces.

Sentences come from a rule (an end mark followed by space and a capital, digit or quote; a line break), so no
model or data file is needed. Windows take whole sentences while they fit `max_words`; a sentence longer than that
(a menu with no punctuation, a list run together) is cut between words. A text that fits one window is returned
as it is, so short passages are read exactly as before.
"""

from __future__ import annotations

import re

# Words per window: most 2022 passages fit whole (91% have at most 200 words), and 200 words are about the 256
# word pieces the encoder reads (1.2-1.3 pieces per word in English prose).
MAX_WORDS = 200

# A sentence ends at . ! ? (and closing quotes or brackets after them) followed by space and what can start a
# sentence; or at a line break, which on a web page ends a block (a menu item, a heading, a paragraph).
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=[ \t]+[\"'\u201c\u2018(\[]?[A-Z0-9])|(?=\n)")
_WORD = re.compile(r"\S+")


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


def _word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [word.span() for word in _WORD.finditer(text, start, end)]


def window_spans(text: str, max_words: int = MAX_WORDS) -> list[tuple[int, int]]:
    """(start, end) of each window of `text`: consecutive whole sentences of at most `max_words` words together,
    a longer sentence cut into pieces of `max_words` words. Windows do not overlap and cover every word once."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    windows: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    current_words = 0
    for start, end in sentence_spans(text):
        words = _word_spans(text, start, end)
        if len(words) > max_words:
            # Close the open window, then cut the sentence; its last piece may take the sentences that follow.
            if current is not None:
                windows.append(current)
            pieces = [words[i: i + max_words] for i in range(0, len(words), max_words)]
            windows.extend((piece[0][0], piece[-1][1]) for piece in pieces[:-1])
            current, current_words = (pieces[-1][0][0], pieces[-1][-1][1]), len(pieces[-1])
        elif current is not None and current_words + len(words) <= max_words:
            current, current_words = (current[0], end), current_words + len(words)
        else:
            if current is not None:
                windows.append(current)
            current, current_words = (start, end), len(words)
    if current is not None:
        windows.append(current)
    return windows


def windows(text: str, max_words: int = MAX_WORDS) -> list[str]:
    """The passages of `text` (see `window_spans`); a text of at most `max_words` words is one passage, unchanged
    but for surrounding whitespace. An empty text has none."""
    if len(_WORD.findall(text, 0, len(text))) <= max_words:
        stripped = text.strip()
        return [stripped] if stripped else []
    return [text[start:end] for start, end in window_spans(text, max_words)]
