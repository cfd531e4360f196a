import re

import pytest

from app.passages import MAX_WORDS, READ_WORDS, Passage, read_passages, sentence_spans, window_spans, windows
from app.passages import MIN_SCORED_WORDS as MIN_SCORED
from app.records import Document

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
    with pytest.raises(ValueError, match="max_words must be at least 1, got 0"):
        window_spans("a b", 0)


# --- which passages a topic reads -----------------------------------------------------------------------------

def fits_when_short(texts: list[str]) -> list[bool]:
    """A stand-in for the encoder's word-piece count: a text of at most 30 words is read whole."""
    return [len(words(text)) <= 30 for text in texts]


def page(*topics: str) -> str:
    """A long page: a menu, then one paragraph of 120 words on each topic word (a window each, as the stages read)."""
    return "\n".join(["Home\nAbout\nContact"] + [f"{topic.capitalize()} " + "word " * 118 + "end." for topic in topics])


def test_short_documents_are_one_passage_as_they_are():
    short = Document("d1", "  Cats are better pets than dogs.  ")
    read = read_passages({"1": "cats"}, {"1": [short]}, fits_when_short)
    assert read == {"1": {"d1": [Passage("d1", short.text)]}}
    assert read["1"]["d1"][0].key == "d1"


def test_long_documents_give_their_first_window_and_the_best_bm25_windows_per_topic():
    long = Document("d2", page("zebras", "cats", "lions", "dogs", "otters"))
    other = Document("d5", page("otters", "zebras", "cats"))
    read = read_passages({"1": "cats", "2": "dogs otters"}, {"1": [long, other], "2": [long]}, fits_when_short,
                         per_document=3)
    heads = {qid: {doc: [passage.text.split()[0] for passage in found] for doc, found in by_doc.items()}
             for qid, by_doc in read.items()}
    # the first window, then the best for the topic (the earlier among ties), in text order
    assert heads == {"1": {"d2": ["Home", "Cats", "Lions"], "d5": ["Home", "Zebras", "Cats"]},
                     "2": {"d2": ["Home", "Dogs", "Otters"]}}
    for passage in read["1"]["d2"] + read["1"]["d5"]:
        start, end = passage.span
        text = long.text if passage.doc_id == "d2" else other.text
        assert text[start:end] == passage.text and passage.key == f"{passage.doc_id} {start}-{end}"
        assert passage.document == text and len(words(passage.text)) <= READ_WORDS


def test_per_document_bounds_the_windows_and_one_means_the_first():
    long = Document("d3", page("a", "b", "c", "d", "e", "f"))
    assert [p.span for p in read_passages({"1": "zebra"}, {"1": [long]}, fits_when_short, per_document=1)["1"]["d3"]] \
        == [window_spans(long.text, READ_WORDS)[0]]
    assert len(read_passages({"1": "b c d"}, {"1": [long]}, fits_when_short, per_document=10)["1"]["d3"]) \
        == len(window_spans(long.text, READ_WORDS))
    with pytest.raises(ValueError):
        read_passages({"1": "b"}, {"1": [long]}, fits_when_short, per_document=0)


def test_a_query_without_indexed_terms_keeps_the_first_windows():
    long = Document("d4", page("a", "b", "c", "d"))
    read = read_passages({"1": "the of and"}, {"1": [long]}, fits_when_short, per_document=2)["1"]["d4"]
    assert [p.span for p in read] == window_spans(long.text, READ_WORDS)[:2]


def test_a_document_with_another_text_under_another_topic_is_read_with_each():
    """A re-rank file may give one id query-dependent texts: each topic reads its own, under its own key."""
    short, other_short = Document("d6", "Cats purr."), Document("d6", "Museum hours.")
    long, other_long = Document("d7", page("cats", "dogs")), Document("d7", page("zebras", "lions"))
    read = read_passages({"1": "cats", "2": "lions", "3": "cats"},
                         {"1": [short, long], "2": [other_short, other_long], "3": [short, long]}, fits_when_short)
    assert [p.text for p in read["1"]["d6"]] == ["Cats purr."]
    assert [p.text for p in read["2"]["d6"]] == ["Museum hours."]
    assert read["1"]["d6"][0].key == "d6" and read["2"]["d6"][0].key == "d6 #2" and read["3"] == read["1"]
    assert {p.document for p in read["2"]["d7"]} == {other_long.text}
    assert not {p.key for p in read["1"]["d7"]} & {p.key for p in read["2"]["d7"]}


def test_sentences_filling_a_window_exactly_share_it():
    assert window_spans("A b. C d. E f.", 4) == [(0, 9), (10, 14)]


def test_a_sentence_may_open_with_a_digit():
    text = "Prices rose. 2020 was bad."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["Prices rose.", "2020 was bad."]


def test_a_sentence_ends_without_the_spaces_before_its_line_break():
    text = "Home \nAbout us \t \nSign up"
    assert [text[a:b] for a, b in sentence_spans(text)] == ["Home", "About us", "Sign up"]


def test_whitespace_after_the_last_sentence_is_no_sentence():
    assert sentence_spans("Cats purr.\n\n") == [(0, 10)]
    assert sentence_spans("Cats purr.\n \n") == [(0, 10)]


def test_a_long_document_is_read_by_its_first_window_and_two_best_by_default():
    """PER_DOCUMENT: the first window and the two best BM25 windows, of READ_WORDS words at most."""
    text = "\n".join(["Home\nAbout"] + [f"{word.capitalize()} " + "word " * 118 + "end."
                                       for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")])
    read = read_passages({"1": "charlie echo"}, {"1": [Document("d", text)]}, lambda texts: [False] * len(texts))
    spans = window_spans(text, READ_WORDS)
    assert [passage.span for passage in read["1"]["d"]] == [spans[0], spans[2], spans[4]] and len(spans) == 6


@pytest.mark.parametrize("bad", [0, -1])
def test_window_spans_of_no_words_and_of_a_bound_below_one(bad):
    assert window_spans("") == [] and window_spans(" \n\t") == []
    with pytest.raises(ValueError, match="at least 1"):
        window_spans("a b", bad)


def _filler(count: int, seed: int) -> str:
    """`count` words of sentences about other things."""
    import random

    rng = random.Random(seed)
    vocabulary = ["recipe", "garden", "weather", "football", "holiday", "music", "kitchen", "traffic", "painting",
                  "river", "camera", "bicycle", "museum", "festival", "library", "mountain"]
    sentences = [" ".join(rng.choice(vocabulary) for _ in range(9)).capitalize() + "." for _ in range(count // 10)]
    return " ".join(sentences)


ARGUMENT = ("Nuclear energy is cleaner than coal. Nuclear plants emit almost no carbon dioxide, while coal plants "
            "emit the most of any energy source.")


def test_a_corpus_of_passages_ranks_as_whole_document_bm25():
    """Documents of at most MAX_WORDS words are one passage each: the same rows and scores as LexicalIndex."""
    import numpy as np

    from app.lexical import LexicalIndex
    from app.passages import PassageIndex

    texts = [ARGUMENT, _filler(150, 1), "Coal is cheap energy.", "", "nuclear " * 3, _filler(190, 2) + " coal"]
    queries = ["nuclear energy or coal", "cheap energy", "garden"]
    for (rows, scores), (expected_rows, expected_scores) in zip(PassageIndex.build(texts).search(queries, 4),
                                                                LexicalIndex.build(texts).search(queries, 4)):
        assert rows.tolist() == expected_rows.tolist()
        np.testing.assert_array_equal(scores, expected_scores)


def test_a_long_page_ranks_by_its_best_passage():
    """An argument set inside 4,000 words of other text: whole-document BM25 scored the page below a text that
    barely touches the query, at a ninth of the argument alone; by its best passage it ranks next to the argument,
    which its window shares with 180 other words."""
    from app.lexical import LexicalIndex
    from app.passages import PassageIndex

    page = f"{_filler(2_000, 3)} {ARGUMENT} {_filler(2_000, 4)}"
    texts = [_filler(100, 5) + " Coal energy.", page, ARGUMENT] + [_filler(120, seed) for seed in range(6, 30)]
    query = ["Is nuclear energy better than coal?"]
    rows, scores = PassageIndex.build(texts).search(query, 3)[0]
    assert rows.tolist() == [2, 1, 0] and scores[1] > 0.5 * scores[0]
    rows, scores = LexicalIndex.build(texts).search(query, 3)[0]
    assert rows.tolist() == [2, 0, 1] and scores[2] < 0.2 * scores[0]  # whole, the page came last


def test_a_short_window_joins_the_one_before_it_in_the_index_only():
    """A page's 6-word tail naming the query outscored a 78-word argument (BM25 favours short passages); joined
    to the window before, it scores as a 204-word passage. The stages' windows keep their 200-word bound."""
    from app.passages import MIN_SCORED_WORDS, PassageIndex, scored_windows

    page = f"{_filler(222, 10)} Nuclear energy is mentioned here once."
    assert [len(words(window)) for window in windows(page)] == [198, 6]
    assert [len(words(window)) for window in windows(f"{page} {_filler(60, 11)}")] == [198, 60]
    assert scored_windows(page) == [page] and len(words(page)) - MAX_WORDS < MIN_SCORED_WORDS
    assert scored_windows(f"{page} {_filler(60, 11)}") == windows(f"{page} {_filler(60, 11)}")
    assert scored_windows(ARGUMENT) == windows(ARGUMENT) == [ARGUMENT]
    argument = f"{_filler(80, 12)} Nuclear energy is cleaner than coal."
    rows, _ = PassageIndex.build([page, argument, _filler(150, 13)]).search(["Is nuclear energy clean?"], 2)[0]
    assert rows.tolist() == [1, 0]


def test_a_run_without_spaces_counts_as_words_of_max_word_chars_in_the_index_only():
    """A 50,000-character tag list without spaces after an argument was one "word" of its window: 6,000 BM25 tokens
    whose length normalization took the argument from rank 8 to 123 (a helper's attack). The windows the stages read
    are as before: their encoder reads word pieces."""
    from app.passages import MAX_WORD_CHARS, PassageIndex, scored_windows

    tags = ",".join(f"tag{i}" for i in range(10_000))
    page = f"{ARGUMENT} {tags}"
    assert windows(page) == [page]
    scored = scored_windows(page)
    assert "".join(scored).replace(" ", "") == page.replace(" ", "") and len(scored) >= len(page) // 8_000
    assert all(len(window) <= (MAX_WORDS + MIN_SCORED) * (MAX_WORD_CHARS + 1) for window in scored)
    texts = [page, _filler(150, 14) + " Coal energy is cheap.", *(_filler(120, seed) for seed in range(15, 25))]
    rows, _ = PassageIndex.build(texts).search(["Is nuclear energy better than coal?"], 2)[0]
    assert rows.tolist() == [0, 1]


def test_passage_index_keeps_corpus_order_among_ties_and_drops_unmatched_documents():
    from app.passages import PassageIndex

    long_copy = f"{ARGUMENT} {_filler(400, 7)}"
    index = PassageIndex.build(["garden", long_copy, ARGUMENT, "", long_copy])
    rows, scores = index.search(["nuclear coal"], 10)[0]
    assert rows.tolist() == [2, 1, 4] and scores[1] == scores[2] < scores[0]  # the copies by the same window
    assert index.size == 5 and [len(rows) for rows, _ in PassageIndex.build([]).search(["coal"], 10)] == [0]


def test_passage_index_round_trip_and_a_starts_file_that_does_not_fit(tmp_path):
    import numpy as np

    from app.passages import PassageIndex

    texts = [ARGUMENT, f"{_filler(600, 8)} {ARGUMENT}", _filler(50, 9)]
    index = PassageIndex.build(texts)
    assert index.starts.tolist() == [0, 1, 4]  # 540 + 21 words: three windows
    index.save(tmp_path)
    loaded = PassageIndex.load(tmp_path, len(texts))
    for (rows, scores), (loaded_rows, loaded_scores) in zip(index.search(["coal", "nuclear carbon"], 3),
                                                           loaded.search(["coal", "nuclear carbon"], 3)):
        assert rows.tolist() == loaded_rows.tolist() and scores.tolist() == loaded_scores.tolist()
    with pytest.raises(ValueError, match="does not fit its 4 documents"):
        PassageIndex.load(tmp_path, 4)
    np.save(tmp_path / PassageIndex.STARTS, np.array([0, 5, 1]))
    with pytest.raises(ValueError, match="does not fit"):
        PassageIndex.load(tmp_path, 3)


def test_a_starts_file_claiming_more_rows_than_it_holds_is_damaged_not_out_of_memory(tmp_path):
    """Its header claimed 10**11 rows: np.load allocated 745 GiB first, and every run on the cache ended."""
    from app.passages import PassageIndex

    PassageIndex.build([ARGUMENT, "Coal is cheap."]).save(tmp_path)
    path = tmp_path / PassageIndex.STARTS
    data = path.read_bytes()
    path.write_bytes(data.replace(b"'shape': (2,)", b"'shape': (100000000000,)", 1))
    assert path.read_bytes() != data
    with pytest.raises(ValueError):
        PassageIndex.load(tmp_path, 2)


def test_a_long_document_is_read_in_windows_of_read_words():
    """Paragraphs of 90 words: 200-word windows would take two a window, READ_WORDS (150) one."""
    text = "\n".join(["Home"] + [f"{word.capitalize()} " + "word " * 88 + "end."
                                 for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")])
    read = read_passages({"1": "charlie echo"}, {"1": [Document("d", text)]}, lambda texts: [False] * len(texts))
    assert read["1"]["d"] and all(len(words(p.text)) <= READ_WORDS for p in read["1"]["d"])
    assert len(window_spans(text)) < len(window_spans(text, READ_WORDS))
