"""The BM25 first stage: ranking behaviour, and the chunked builder against plain bm25s."""

from __future__ import annotations

import gzip
import itertools
import json

import bm25s
import numpy as np
import pytest

from app.lexical import LexicalIndex, make_tokenizer
from app.topics import read_topics

TEXTS = ["Cats are independent pets that need no walks.",
         "Dogs need daily walks and lots of attention.",
         "The train station is in the city centre.",
         "Walking the dog every day keeps owners healthy."]


def test_bm25_ranks_matching_texts_first_and_stems():
    index = LexicalIndex.build(TEXTS)
    (rows, scores), = index.search(["walking dogs"], k=10)
    assert set(rows[:2]) == {1, 3}  # "walks"/"walking" and "dogs"/"dog" share stems
    assert list(scores) == sorted(scores, reverse=True) and (scores > 0).all()
    assert 2 not in rows  # no shared term: not retrieved


def test_k_is_capped_and_unknown_or_stopword_queries_return_nothing():
    index = LexicalIndex.build(TEXTS)
    results = index.search(["cats", "zebra", "the and of"], k=100)
    assert list(results[0][0]) == [0]
    assert len(results[1][0]) == 0 and len(results[2][0]) == 0


def test_a_query_without_an_indexed_term_does_not_find_the_documents_without_one():
    """bm25s searched such a query (another language, stopwords only) as its empty token, which the documents of
    no indexed word hold: they became the topic's candidates."""
    index = LexicalIndex.build([*TEXTS, "!!! ??? !!!", "- - - | | a b"])
    for query in ("茶和咖啡哪个更好？", "the and of", ""):
        (rows, _), = index.search([query], k=10)
        assert len(rows) == 0 and not index.scores(query).any()


def test_scores_give_every_row_the_score_search_ranks_by():
    index = LexicalIndex.build(TEXTS)
    scores = index.scores("walking dogs")
    (rows, found), = index.search(["walking dogs"], k=10)
    assert scores.shape == (len(TEXTS),) and scores[2] == 0
    np.testing.assert_array_equal(scores[rows], found)
    assert not index.scores("the and of").any() and not index.scores("").any()


# The chunked builder against plain bm25s, as LexicalIndex.build indexed before it streamed in chunks.

def _bm25s_reference(texts: list[str]) -> LexicalIndex:
    tokenizer = make_tokenizer()
    retriever = bm25s.BM25()
    retriever.index(tokenizer.tokenize(texts, return_as="tuple", show_progress=False), show_progress=False)
    return LexicalIndex(retriever, tokenizer, len(texts))


def _assert_same_index(index: LexicalIndex, expected: LexicalIndex, queries: list[str], k: int) -> None:
    for key in ("data", "indices", "indptr"):
        built, reference = index.retriever.scores[key], expected.retriever.scores[key]
        assert built.dtype == reference.dtype, key
        np.testing.assert_array_equal(built, reference, err_msg=key)
    assert index.retriever.scores["num_docs"] == expected.retriever.scores["num_docs"] == index.size
    assert index.retriever.vocab_dict == expected.retriever.vocab_dict
    assert index.tokenizer.stem_to_sid == expected.tokenizer.stem_to_sid
    assert len(index.tokenizer.word_to_id) <= 1  # the per-word caches are dropped after the build
    hits, expected_hits = index.search(queries, k), expected.search(queries, k)
    assert sum(len(rows) for rows, _ in expected_hits) > len(queries)  # the queries do retrieve
    for (rows, scores), (expected_rows, expected_scores) in zip(hits, expected_hits):
        assert rows.tolist() == expected_rows.tolist()
        np.testing.assert_allclose(scores, expected_scores, rtol=1e-6)


def _generated_texts(count: int, seed: int) -> list[str]:
    """Texts over inflected words and stopwords, some empty or stopwords only; new words keep appearing, and
    one word 300 times in one text (a frequency beyond uint8)."""
    rng = np.random.default_rng(seed)
    words = ["walk", "walks", "walking", "dog", "dogs", "cat", "cats", "the", "and", "of", "energy", "nuclear",
             "better", "best", "school", "uniforms", "vaccines", "vaccinated"]
    texts = []
    for i in range(count):
        length = int(rng.integers(0, 40))
        picked = [words[j] for j in rng.integers(0, len(words), size=length)] + [f"rare{i // 3}"] * (i % 4)
        texts.append(" ".join(picked) if i % 11 else ("the and of" if i % 2 else ""))
    texts[5] += " nuclear" * 300
    return texts


GENERATED_QUERIES = ["walking dogs", "cats", "nuclear energy", "the best school uniforms", "rare5 rare40",
                     "vaccinated", "rare299 walk"]


@pytest.mark.parametrize("chunk_docs", [1, 7, 64, 10_000])
def test_chunked_build_equals_bm25s(chunk_docs):
    texts = _generated_texts(300, seed=chunk_docs)
    index = LexicalIndex.build((text for text in texts), chunk_docs=chunk_docs)  # a generator, no size
    _assert_same_index(index, _bm25s_reference(texts), GENERATED_QUERIES, k=40)


def test_chunked_build_equals_bm25s_on_real_passages(shared_data):
    task = shared_data / "touche-2022-task2"
    with gzip.open(task / "tira-input" / "passages.jsonl.gz", "rt", encoding="utf-8") as lines:
        texts = [json.loads(line)["contents"] for line in itertools.islice(lines, 700)]
    texts[10:10] = ["", "The and of it."]  # an empty and a stopwords-only passage
    queries = [topic.title for topic in read_topics(task / "topics-task2.xml")]
    index = LexicalIndex.build(iter(texts), chunk_docs=128, progress=True)
    _assert_same_index(index, _bm25s_reference(texts), queries, k=100)


def test_equal_scores_come_in_corpus_order_and_the_first_of_them_are_kept():
    """bm25s's top-k kept the last of tied documents, the last first: 30 copies of a text at k=5 gave rows 29 ... 25."""
    texts = ["coffee is fine"] * 3 + ["tea is good"] * 30 + ["a good tea, the best tea there is"]
    index = LexicalIndex.build(iter(texts))
    (rows, scores), = index.search(["good tea"], 5)
    assert rows.tolist() == [3, 4, 5, 6, 7] and scores[0] == scores[4] > 0
    (rows, scores), = index.search(["good tea"], 100)
    assert rows.tolist() == [*range(3, 33), 33] and scores[29] > scores[30] > 0  # the long text: a lower score


def test_search_keeps_the_scores_bm25s_ranks_by():
    """The same scores as bm25s's own retrieve, best first."""
    texts = _generated_texts(300, seed=5)
    index = LexicalIndex.build(iter(texts))
    for query, ((rows, scores),) in ((query, index.search([query], 40)) for query in GENERATED_QUERIES):
        query_ids = index._query_ids([query])[0]
        if not query_ids:
            continue
        _, expected = index.retriever.retrieve([query_ids], k=40, show_progress=False, n_threads=1)
        expected = expected[0][expected[0] > 0]
        np.testing.assert_allclose(scores, expected, rtol=1e-6)
        np.testing.assert_allclose(scores, index.scores(query)[rows], rtol=0)


def test_empty_corpus_retrieves_nothing():
    index = LexicalIndex.build(iter([]))
    assert index.size == 0 and index.retriever.scores["num_docs"] == 0
    assert [len(rows) for rows, _ in index.search(["cats"], k=10)] == [0]


def test_chunked_index_survives_a_save_and_load(tmp_path):
    texts = _generated_texts(200, seed=3)
    index = LexicalIndex.build(iter(texts), chunk_docs=50)
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path)
    assert loaded.size == len(texts)
    for (rows, scores), (loaded_rows, loaded_scores) in zip(index.search(GENERATED_QUERIES, 30),
                                                           loaded.search(GENERATED_QUERIES, 30)):
        assert rows.tolist() == loaded_rows.tolist()
        np.testing.assert_array_equal(scores, loaded_scores)


def test_a_search_for_more_than_the_corpus_holds_finds_every_match():
    index = LexicalIndex.build(["cats are pets", "cats hunt mice", "the cat sleeps"])
    rows, _ = index.search(["cats"], 1000)[0]
    assert sorted(rows.tolist()) == [0, 1, 2]
