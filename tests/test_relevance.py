"""Tests of the relevance head: features, scoring contract, and the shipped model on a comparative topic."""

from __future__ import annotations

import numpy as np
import pytest

from app.errors import ToucheError
from app.records import Topic
from app.relevance import EMBEDDING_DIM, FEATURE_NAMES, QUERY_NAMES, RelevanceModel, relevance_features, topic_queries
from app.training import relevance as training

TOPIC = Topic("2", "Which is better, a laptop or a desktop?",
              "A user wants to buy a new PC and wants arguments for which kind of machine suits which situation.",
              "Relevant documents compare laptops and desktops with advantages and disadvantages.",
              ("laptop", "desktop"))
ON_TOPIC = (
    "A laptop is better than a desktop if you travel a lot, because you can carry it anywhere and work on the "
    "train. However, a desktop gives you more performance for the same price, is easier to upgrade and has a "
    "bigger screen, so for gaming or video editing at home a desktop is the better choice.")
OFF_TOPIC = (
    "Our bakery opens at seven every morning. Fresh bread, croissants and cakes are baked daily, and on Sundays "
    "we offer a brunch buffet with coffee and orange juice for the whole family.")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.normal(size=(n, EMBEDDING_DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_topic_queries_fall_back_to_the_title():
    assert topic_queries(TOPIC)[1].startswith(TOPIC.title + " A user")
    bare = Topic("7", "Cats or dogs?", "", "", None)
    assert topic_queries(bare) == ["Cats or dogs?"] * 4
    assert len(QUERY_NAMES) == 4


def test_relevance_features_columns():
    rng = np.random.default_rng(0)
    passages, queries = unit(rng, 3), unit(rng, 4)
    features = relevance_features(passages, queries, np.array([1.0, 0.5, 0.0]), np.array([200, 10, 0]))
    assert features.shape == (3, len(FEATURE_NAMES))
    np.testing.assert_allclose(features[:, :4], passages @ queries.T, rtol=1e-5)
    np.testing.assert_allclose(features[:, 4], [1.0, 0.5, 0.0])
    assert features[0, 5] == pytest.approx(1.0) and features[2, 5] == 0.0
    with pytest.raises(ToucheError):
        relevance_features(passages, queries[:2], np.zeros(3), np.zeros(3))


def test_save_load_round_trip_and_shape_check(tmp_path):
    rng = np.random.default_rng(1)
    n = len(FEATURE_NAMES)
    model = RelevanceModel(np.zeros(n), np.ones(n), rng.normal(size=n), rng.normal(size=EMBEDDING_DIM) * 0.1, 0.2,
                           info={"note": "toy"})
    model.save(tmp_path / "relevance.npz")
    loaded = RelevanceModel.load(tmp_path / "relevance.npz")
    word_counts, embeddings, queries = np.array([3, 2]), unit(rng, 2), unit(rng, 4)
    np.testing.assert_allclose(loaded.score(TOPIC, word_counts, embeddings, queries, np.array([1.0, 0.2])),
                               model.score(TOPIC, word_counts, embeddings, queries, np.array([1.0, 0.2])), rtol=1e-6)
    assert loaded.info == {"note": "toy"}
    with pytest.raises(ToucheError):
        model.score(TOPIC, word_counts, embeddings[:1], queries, np.zeros(2))
    with pytest.raises(ToucheError):
        RelevanceModel.load(tmp_path / "absent.npz")


def test_within_topic_pairs_only_pair_same_topic_different_grades():
    grades = np.array([2, 0, 1, 2, 0])
    qids = np.array(["1", "1", "1", "2", "2"])
    pairs = training.within_topic_pairs(grades, qids, np.arange(5))
    assert sorted(map(tuple, pairs.tolist())) == [(0, 1), (0, 2), (2, 1), (3, 4)]


def test_shipped_model_loads_with_cross_validated_report():
    model = RelevanceModel.load()
    assert model.embedding_weights.shape == (EMBEDDING_DIM,)
    assert 0.0 < model.info["touche_relevance_ndcg5_judged_cv"] <= 1.0


@pytest.mark.slow
def test_shipped_model_prefers_an_on_topic_comparative_argument():
    from app.encoder import encode

    model = RelevanceModel.load()
    texts = [ON_TOPIC, OFF_TOPIC]
    word_counts = np.array([len(text.split()) for text in texts])
    scores = model.score(TOPIC, word_counts, encode(texts), encode(topic_queries(TOPIC)), np.array([1.0, 0.3]))
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))
    assert scores[0] > scores[1] + 0.1
    # the same holds with the queries encoded by the model itself and equal BM25 scores
    scores = model.score(TOPIC, word_counts, encode(texts), None, np.array([0.5, 0.5]))
    assert scores[0] > scores[1]
