"""The rerank (app/rerank.py): the passages encoded, each distinct text once, and the embedding cache."""

import pytest

from app.settings import RunSettings


@pytest.fixture
def encoded_texts(monkeypatch):
    """The texts the encoder is given, each encoded as a vector of its length in characters."""
    import numpy as np

    from app import encoder

    texts_given = []

    def encode(texts, **options):
        texts_given.extend(texts)
        return np.array([[float(len(text))] * 384 for text in texts], dtype=np.float32)

    monkeypatch.setattr(encoder, "encode", encode)
    return texts_given


def test_the_embedding_cache_keys_a_vector_by_its_text_not_by_the_passage_key(encoded_texts, tmp_path):
    """A re-rank file's second text of a document is "id #2" in the order a run meets it: another run's topics or
    depth gave the cached vector of one text to the other, a wrong run without a word."""
    from app.cache import CorpusCache
    from app.passages import Passage
    from app.rerank import encode_passages

    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", progress=False, device="cpu")
    cache = CorpusCache(tmp_path / "cache", "rerank-file")
    first = {"1": {"d": [Passage("d", "short text")], "d #2": [Passage("d #2", "a much longer text")]}}
    second = {"2": {"d": [Passage("d", "a much longer text")], "e": [Passage("e", "short text")]}}
    for passages in (first, second):
        encoded = encode_passages(passages, settings, cache)
        assert [vector[0] for vector in encoded.vectors] == [len(text) for text in encoded.texts]
    assert encoded_texts == ["short text", "a much longer text"]  # the second run encoded nothing anew


def test_passages_of_one_text_each_get_its_vector_without_a_cache(encoded_texts, tmp_path):
    """ChatNoir runs have no corpus cache: a text two pages share (mirrors, a host's error page) is encoded once,
    and every passage after it must still get its own text's vector."""
    from app.passages import Passage
    from app.rerank import encode_passages

    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", progress=False, device="cpu")
    passages = {"1": {"a": [Passage("a", "a mirrored page")], "b": [Passage("b", "a mirrored page")],
                      "c": [Passage("c", "another page, longer")]}}
    encoded = encode_passages(passages, settings, None)
    assert encoded.ids == ["a", "b", "c"] and encoded_texts == ["a mirrored page", "another page, longer"]
    assert [vector[0] for vector in encoded.vectors] == [15.0, 15.0, 20.0]


def test_a_stand_in_text_takes_the_typical_length_and_quality_of_the_others():
    """A page whose fetch failed, read as its 40-word snippet, fell from ChatNoir's top 10 to the bottom of the
    reranked head: its length and text statistics are unknown, not short. The typical ones are the documents', a
    long page counting once whatever its passages."""
    import numpy as np

    from app.rerank import typical_where_unknown

    # documents: a stand-in (row 0), a 2,000-word page of three passages (rows 1-3), pages of 90 and 110 words
    words, quality = np.array([40, 2000, 2000, 2000, 90, 110]), np.array([0.1, 0.9, 0.8, 0.7, 0.3, 0.5], np.float32)
    documents = [np.array([0]), np.array([1, 2, 3]), np.array([4]), np.array([5])]
    stand_in = np.array([True, False, False, False])
    typical_words, typical_quality = typical_where_unknown(words, quality, documents, stand_in)
    assert typical_words.tolist() == [110, 2000, 2000, 2000, 90, 110]
    assert typical_quality[0] == pytest.approx(0.5) and typical_quality[1:].tolist() == quality[1:].tolist()
    assert quality[0] == pytest.approx(0.1)  # the read values are kept
    for flags in (np.zeros(4, bool), np.ones(4, bool)):  # none, or all: compared as read
        assert typical_where_unknown(words, quality, documents, flags)[0].tolist() == words.tolist()


def test_each_distinct_query_is_encoded_once_and_every_topic_gets_its_four_rows(encoded_texts, tmp_path):
    """A title-only topic asks its title four times (`topic_queries`); it was encoded four times."""
    from app.records import Topic
    from app.rerank import encode_queries

    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", progress=False, device="cpu")
    topics = [Topic("1", "Is tea better than coffee?"), Topic("2", "Cats or dogs?", "Which pet is better?", "More.")]
    queries = encode_queries(topics, settings)
    assert encoded_texts == ["Is tea better than coffee?", "Cats or dogs?", "Cats or dogs? Which pet is better?",
                             "Which pet is better?", "More."]
    assert [row[0] for row in queries["1"]] == [len("Is tea better than coffee?")] * 4
    assert [row[0] for row in queries["2"]] == [13, 34, 20, 5]
