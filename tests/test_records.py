"""How documents' ids, scores and texts are read (`app.records`): one reading for every corpus format."""

from decimal import Decimal

import pytest

from app.records import MAX_TEXT_CHARS, bounded_text, query_id, record_id, record_score


def test_an_id_is_a_stripped_word_or_none():
    assert record_id(" d1 ") == "d1" and record_id(7) == "7" and record_id(7.0) == "7"  # pandas' ids with a NaN
    assert record_id(Decimal("7.0")) == "7" and record_id(Decimal("7.5")) is None  # as ijson reads args.me
    for bad in ("d 1", "", "  ", "d\x001", "d\u200b1", True, 1.5, float("nan"), float("inf"), None, ["d1"],
                1.2345678901234567e19, 1e300, Decimal("NaN"), Decimal("1e300")):  # past 2**53: no id as written
        assert record_id(bad) is None, bad


def test_a_query_id_loses_format_characters_and_a_whole_floats_decimals():
    assert query_id("\u200f12") == "12" and query_id(3.0) == "3" and query_id(3.5) is None


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), True, False, 10**400, "3.0", None])
def test_a_score_is_a_finite_number_else_none(value):
    assert record_score(value) is None


def test_finite_scores_are_floats():
    assert record_score(3) == 3.0 and record_score(-0.5) == -0.5


def test_a_text_is_cleaned_composed_and_cut():
    assert bounded_text("a\n\nb") == "a\nb" and bounded_text("a \n b") == "a\nb"
    assert bounded_text("cafe\u0301\u00a0au\u00adlait") == "caf\u00e9 aulait"
    assert len(bounded_text("word " * MAX_TEXT_CHARS)) == MAX_TEXT_CHARS


def test_every_noncharacter_and_bidirectional_control_goes():
    """Noncharacters past U+FFFF and in U+FDD0-U+FDEF stayed in page texts, and bidirectional controls within a
    word split it for BM25 and the stance features ("nu\u202ecl\u202cear" was "nu" and "cl" and "ear")."""
    assert bounded_text("nu\u202ecl\u202cear \u2066power\u2069") == "nuclear power"
    assert bounded_text("a\ufdd0b \U0001fffe c \U0010ffff d\ufffe") == "a b c d"


def test_a_terminal_escape_sequence_goes_whole():
    """Its ESC alone went: "Is \\e[31mtea\\e[0m better than coffee?" was "Is [31mtea [0m better ...", whose objects
    the classifier read as "0m" and "coffee" (an attack on the classifier); a lone ESC is a space, as before."""
    assert bounded_text("Is \x1b[31mtea\x1b[0m better than \x1b[1;4mcoffee\x1b[K?") == "Is tea better than coffee?"
    assert bounded_text("a\x1bb [31m") == "a b [31m"
    # `tput sgr0`'s ESC ( B, an OSC 8 hyperlink (a review)
    assert bounded_text("Is tea\x1b(B\x1b[m better?") == "Is tea better?"
    assert bounded_text("See \x1b]8;;https://example.org\x1b\\the page\x1b]8;;\x1b\\ now") == "See the page now"


@pytest.mark.parametrize("text, cleaned", [
    ("\U0001f600 fine", "\U0001f600 fine"),  # an emoji alone needs no cleaning
    ("\U0001f600 a\U0001fffeb", "\U0001f600 a b"),  # a noncharacter after an emoji is found
    ("a\U0010ffff", "a"), ("a\uffffb", "a b"),
])
def test_astral_characters_are_told_apart_from_the_noncharacters_among_them(text, cleaned):
    """Whether a text needs cleaning is first asked of a class whose astral part is one range (ten times faster);
    a text holding any astral character is then asked the whole question."""
    assert bounded_text(text) == cleaned
