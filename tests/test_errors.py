"""How messages count what they report."""

import pytest

from app.errors import counted


@pytest.mark.parametrize("count, noun, words", [(1, "bad line", "1 bad line"), (2, "bad line", "2 bad lines"),
                                                (0, "record", "0 records"),
                                                (3, "line without text", "3 lines without text"),
                                                (6, "argument with an id no run can hold",
                                                 "6 arguments with an id no run can hold"),
                                                (2, "unreadable page (OSError)", "2 unreadable pages (OSError)")])
def test_counts_are_worded_as_counts(count, noun, words):
    assert counted(count, noun) == words


def test_listed_names_the_first_five_and_says_there_are_more():
    from app.errors import listed

    assert listed(["1", "2"]) == "1, 2"
    assert listed([str(n) for n in range(7)]) == "0, 1, 2, 3, 4, ..."
