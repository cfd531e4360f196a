import re

import pytest

from app.passages import MAX_WORDS, sentence_spans, window_spans, windows

PAGE = ("Home\nAbout us\nSign up\n\n"
        "Python is easier to learn than Java. It reads like \"plain English.\" Is it slower? Yes: 10x in loops.\n"
        "Java, however, has static types (which catch errors early).")


def words(text: str) -> list[str]:
    return text.split()


def test_sentences_end_at_marks_and_line_breaks():
    assert [PAGE[a:b] for a, b in sentence_spans(PAGE)] == [
        "Home", "About us", "Sign up", "Python is easier to learn than Java.", "It reads like \"plain English.\"",
        "Is it slower?", "Yes: 10x in loops.", "Java, however, has static types (which catch errors early).",
    ]


def test_no_sentence_break_inside_a_lower_case_continuation():
    text = "It costs 3.5 dollars, e.g. at home. and more"
    assert [text[a:b] for a, b in sentence_spans(text)] == [text]


def test_a_short_text_is_one_passage_unchanged():
    assert windows("  " + PAGE + "\n") == [PAGE]
    assert windows("") == [] and windows(" \n\t") == []


def test_windows_are_whole_sentences_within_the_bound():
    found = windows(PAGE, max_words=9)
    assert found == ["Home\nAbout us\nSign up", "Python is easier to learn than Java.",
                     "It reads like \"plain English.\" Is it slower?", "Yes: 10x in loops.",
                     "Java, however, has static types (which catch errors early)."]


def test_a_sentence_longer_than_the_bound_is_cut_between_words():
    menu = " ".join(f"item{i}" for i in range(2 * MAX_WORDS + 30)) + ". Then a sentence."
    found = windows(menu)
    assert [len(words(window)) for window in found] == [MAX_WORDS, MAX_WORDS, 33]
    assert found[-1].endswith("item429. Then a sentence.")


@pytest.mark.parametrize("max_words", [1, 3, 7, 50])
def test_windows_cover_every_word_once_in_order(max_words):
    text = (PAGE + "\n") * 20 + "\x00odd\ufffdbytes \u00e9t\u00e9. " + "x " * 123
    found = window_spans(text, max_words)
    assert all(len(words(text[a:b])) <= max_words for a, b in found)
    assert [w for a, b in found for w in words(text[a:b])] == words(text)
    assert all(b <= c for (_, b), (c, _) in zip(found, found[1:]))


def test_windows_of_a_long_page_are_about_passage_sized():
    sentence = "Dogs are loyal companions and need daily walks, which keeps their owners fit. "
    found = windows(sentence * 300)
    assert len(found) == -(-300 // (MAX_WORDS // 13))
    assert all(MAX_WORDS - 13 < len(words(window)) <= MAX_WORDS for window in found[:-1])
    assert all(re.match(r"Dogs .* fit\.$", window) for window in found)


def test_max_words_must_be_positive():
    with pytest.raises(ValueError):
        window_spans("a b", 0)
