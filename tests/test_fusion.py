"""Tests of score fusion and of the fusion tuner's cross-validation (synthetic data, no model, no ../shared)."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest

from app.fusion import FusionWeights, aggregate, fuse, length_prior
from app.training import fusion as tuner
from app.training.common import ideal_dcg, judged_ndcg, per_topic_ndcg, topic_folds


def test_length_prior_saturates_and_orders():
    prior = length_prior(np.array([0, 10, 50, 150, 1000]))
    assert prior[0] == 0.0
    assert np.all(np.diff(prior) >= 0)
    assert prior[3] == pytest.approx(1.0) and prior[4] == pytest.approx(1.0)


def test_a_texts_length_counts_words_that_hold_a_letter_or_digit():
    """A title padded with 150 " ." had the length prior of a 150-word passage and ranked first (a helper's attack)."""
    from app.fusion import counted_words

    title = "Is a laptop better than a desktop?"
    assert counted_words(title) == len(title.split()) == 7
    assert counted_words(title + " ." * 150) == counted_words(title + " - \u2022 | ...") == 7
    assert counted_words("e-mail, U.S. 1. 2. a. caf\u00e9 \u6f22\u5b57") == 7
    assert counted_words("") == 0 and length_prior(np.array([counted_words(title + " ." * 150)]))[0] < 0.5


def test_fuse_is_the_weighted_sum_of_present_features():
    features = {"dense": np.array([0.2, 0.8]), "quality": np.array([1.0, 0.0]), "relevance": np.array([0.5, 0.1])}
    weights = FusionWeights(lexical=5.0, dense=1.0, length=0.0, quality=2.0, relevance=3.0)
    np.testing.assert_allclose(fuse(features, weights), [0.2 + 2.0 + 1.5, 0.8 + 0.0 + 0.3])
    with pytest.raises(ValueError):
        fuse({"lexical": np.ones(2)}, FusionWeights(0.0, 1.0, 0.0))


def test_documents_take_the_mean_of_their_best_passages_features():
    features = {"dense": np.array([0.5, 0.9, 0.1, 0.3, 0.7], dtype=np.float32),
                "quality": np.array([0.25, 0.0, 1.0, 0.5, 0.5], dtype=np.float32)}
    weights = FusionWeights(lexical=0.0, dense=1.0, length=0.0, quality=1.0)  # fused: .75 .9 1.1 .8 1.2
    documents, best = aggregate(features, [np.array([0]), np.array([1, 2, 3]), np.array([4])], weights, top=2)
    np.testing.assert_allclose(documents["dense"], [0.5, 0.5, 0.7])  # passages 2 and 1
    np.testing.assert_allclose(documents["quality"], [0.25, 0.5, 0.5])
    assert [rows.tolist() for rows in best] == [[0], [2, 1], [4]] and documents["dense"].dtype == np.float32
    top1, best1 = aggregate(features, [np.array([1, 2, 3])], weights, top=1)
    assert top1["dense"][0] == np.float32(0.1) and [rows.tolist() for rows in best1] == [[2]]


def test_a_document_of_one_passage_keeps_its_features_bit_for_bit():
    rng = np.random.default_rng(13)
    features = {name: rng.random(50).astype(np.float32) for name in ("dense", "length", "quality", "relevance")}
    documents, best = aggregate(features, [np.array([row]) for row in range(50)])
    for name, values in features.items():
        assert documents[name].tobytes() == values.tobytes()
    assert [rows.tolist() for rows in best] == [[row] for row in range(50)]
    ties, first = aggregate({"dense": np.ones(3, dtype=np.float32)}, [np.array([0, 1, 2])],
                            FusionWeights(0.0, 1.0, 0.0), top=1)
    assert [rows.tolist() for rows in first] == [[0]]  # the earlier passage among ties


def test_fold_splits_never_train_on_held_out_topics():
    qids = [str(q) for q in range(1, 24)]
    folds = topic_folds(qids, 5, seed=7)
    splits = tuner.fold_splits(qids, folds)
    held_out = [q for _, test in splits for q in test]
    assert sorted(held_out) == sorted(qids)  # every topic held out exactly once
    for train, test in splits:
        assert test and not set(train) & set(test)
        assert sorted(train + test) == sorted(qids)


def test_judged_ndcg_matches_ir_measures():
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 3, size=12)
    scores = rng.normal(size=(4, 12))
    docs = [f"d{i}" for i in range(12)]
    # two more judged documents that no run retrieved: they raise the ideal DCG
    qrels = [ir_measures.Qrel("1", d, int(g)) for d, g in zip(docs, grades)] + [
        ir_measures.Qrel("1", "missing-a", 2), ir_measures.Qrel("1", "missing-b", 1)]
    ideal = ideal_dcg([q.relevance for q in qrels])
    ours = judged_ndcg(scores, grades.astype(float), ideal)
    measure = ir_measures.nDCG(judged_only=True) @ 5
    for row, value in zip(scores, ours):
        run = [ir_measures.ScoredDoc("1", d, float(s)) for d, s in zip(docs, row)]
        assert value == pytest.approx(measure.calc_aggregate(qrels, run))


def synthetic_topics(n_topics: int = 10, n_docs: int = 30) -> tuple[list, dict, dict]:
    """Topics where relevance follows the 'relevance' feature and quality the 'quality' feature."""
    rng = np.random.default_rng(0)
    topics, relevance, quality = [], {}, {}
    for t in range(n_topics):
        qid = str(t + 1)
        doc_ids = [f"{qid}-{i}" for i in range(n_docs)]
        features = {name: rng.random(n_docs) for name in tuner.GRID}
        for i, d in enumerate(doc_ids):
            if i % 2 == 0:  # half the documents are judged
                relevance[qid, d] = int(features["relevance"][i] * 3)
                quality[qid, d] = int(features["quality"][i] * 3)
        topics.append(tuner.TopicFeatures(qid, doc_ids, features))
    return topics, relevance, quality


def test_cross_validation_finds_the_informative_features(capsys):
    topics, relevance, quality = synthetic_topics()
    evaluation = tuner.GridEvaluation(topics, relevance, quality)
    folds = topic_folds(evaluation.qids, 5, seed=1)
    before = tuner.cross_validate(evaluation, tuner.grid(with_quality=False, with_relevance=False), folds, "before")
    after = tuner.cross_validate(evaluation, tuner.grid(), folds, "after")
    assert after["relevance"] > before["relevance"] + 0.1
    assert after["quality"] > before["quality"] + 0.1
    assert after["relevance_all"] == pytest.approx(after["relevance"])  # every judged document is a candidate
    printed = capsys.readouterr().out
    assert printed.count("after\tfold") == 5 and "after\tmean" in printed


def test_vectorised_judged_ndcg_matches_ir_measures_with_ties():
    """The grid search's judged_ndcg equals per_topic_ndcg (ir_measures) once columns are in trec_eval's tie order."""
    rng = np.random.default_rng(5)
    qids = [str(1 + i % 3) for i in range(30)]
    doc_ids = [f"d{i:02d}" for i in range(30)]
    grades = rng.integers(0, 3, size=30).tolist()
    scores = rng.integers(0, 4, size=30).astype(float)  # many ties: trec_eval breaks them by doc id, descending
    expected = per_topic_ndcg(qids, doc_ids, grades, scores)
    for qid in "123":
        rows = sorted((i for i, q in enumerate(qids) if q == qid), key=lambda i: doc_ids[i], reverse=True)
        gains = np.array([grades[i] for i in rows], dtype=float)
        assert judged_ndcg(scores[None, rows], gains, ideal_dcg(gains))[0] == pytest.approx(expected[qid])
    assert set(expected) == {"1", "2", "3"}


def test_copies_of_a_text_take_their_first_occurrences_features():
    from app import fusion

    copies = fusion.first_copies(["a b", "b", "a  b\n", "a b"])
    assert copies.tolist() == [0, 1, 0, 0]
    head = {"relevance": np.array([0.2, 0.9, 0.3, 0.1]), "quality": np.array([1.0, 2.0, 3.0, 4.0])}
    features = fusion.features(np.array([1.0, 0.8, 0.6, 0.4, 0.2]), head, copies)
    assert features["relevance"].tolist() == [0.2, 0.9, 0.2, 0.2, 0.2]  # the tail padded with the head's minimum
    assert features["quality"].tolist() == [1.0, 2.0, 1.0, 1.0, 1.0]


def test_an_orders_own_scores_read_as_first_stage_scores_do():
    """A re-rank file of ranks without scores gave the lexical feature 0 down to -1, far below the [0, 1] of any
    score the relevance head was trained on, and reordered 11 of the 12 demo topics against the same file scored."""
    from app.fusion import lexical_feature
    from app.records import scores_or_order

    lexical = lexical_feature(np.array(scores_or_order([None] * 1000)))
    assert lexical[0] == 1.0 and np.all(np.diff(lexical) < 0) and 0.0 < lexical[-1] and abs(lexical[100] - 0.5) < 1e-9


def test_the_lexical_feature_is_scaled_by_the_largest_score_negative_ones_shifted_to_start_at_0():
    """Log-probabilities (negative) read as -0.5 and -1.0, outside the BM25 scores scaled to at most 1 that the
    relevance head learned; scores of at most 1 are scaled too."""
    from app.fusion import lexical_feature

    assert lexical_feature([-2.0, -4.0, -3.0]).tolist() == [1.0, 0.0, 0.5]
    assert lexical_feature([2.0, -2.0]).tolist() == [1.0, 0.0]
    assert lexical_feature([0.5, 0.25]).tolist() == [1.0, 0.5]
    assert lexical_feature([0.0, 0.0]).tolist() == [0.0, 0.0] and lexical_feature([]).tolist() == []


def test_the_lexical_feature_of_the_reranked_scores_does_not_hang_on_the_tail_below_them():
    """Shifted by the lowest of all candidates, two reranked log-probabilities read otherwise at --candidates 2 and
    100, and the relevance head ordered the two the other way round."""
    from app.fusion import lexical_feature

    tail = -10.0 * np.arange(1, 99)
    assert lexical_feature([-1.0, -1.5], 2).tolist() == [1.0, 0.0]
    deep = lexical_feature(np.concatenate([[-1.0, -1.5], tail]), 2)
    assert deep[:2].tolist() == [1.0, 0.0] and np.all(deep[2:] == 0.0)
    assert lexical_feature([-0.001], 1).tolist() == [1.0] and lexical_feature([-3.0, -3.0, -4.0], 2).tolist() == [
        1.0, 1.0, 0.0]
    # A positive head above a negative tail (logits crossing 0), and a head ranked by rank with a tail scored above it.
    assert lexical_feature([8.0, 4.0, -12.0], 2).tolist() == [1.0, 0.5, 0.0] and lexical_feature(
        [8.0, 4.0], 2).tolist() == [1.0, 0.5]
    assert lexical_feature([-3.0, -5.0, -1.0, -10.0], 2).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert lexical_feature([1e-300, 1e308], 1).tolist() == [1.0, 1.0] and lexical_feature([2.0, 1.0], 0).tolist() == [
        0.0, 0.0]


def test_extreme_finite_scores_give_a_finite_lexical_feature():
    """1e308 and -1e308 overflowed when shifted (inf / inf) and the run was written with a score `nan`."""
    from app.fusion import lexical_feature

    lexical = lexical_feature([1e308, 5.0, -1e308])
    assert np.all(np.isfinite(lexical)) and lexical.tolist() == [1.0, 0.5, 0.0]


def test_rank_orders_by_score_keeps_ties_in_first_stage_order_and_cuts_at_the_depth():
    """The cut comes before --balance-stance: it may move a document up only from within the run's depth."""
    import numpy as np

    from app.fusion import rank
    from app.records import Candidate, Document

    found = [Candidate("1", Document(f"d{i}", "text"), 1.0) for i in range(5)]
    doc_ids, scores = rank(found, np.asarray([0.5, 0.9, 0.5, 0.5, 0.1]), depth=3)
    assert doc_ids == ["d1", "d0", "d2"] and scores == [0.9, 0.5, 0.5]


def test_words_are_matched_from_the_start_of_a_run_only():
    r"""r"\S*\w\S*" retried at every character of a run without a letter or digit: quadratic, 30,000 dots took
    5.5 s of a run's scoring, 100,000 (a reranked text's bound) about a minute (a review)."""
    from app.fusion import _COUNTED_WORD, counted_words

    text = "Nuclear energy. " + "." * 20_000 + " -" * 5_000 + " coal ...x"
    assert counted_words(text) == 4
    assert all(start == 0 or text[start - 1].isspace() for start in (m.start() for m in _COUNTED_WORD.finditer(text)))
    assert [_COUNTED_WORD.match("...x e-mail", start) for start in (1, 2, 3, 6, 7)] == [None] * 5  # none within a run


def test_underscores_alone_are_no_word():
    from app.fusion import counted_words

    assert counted_words("Nuclear energy is safe." + " _" * 150 + " __init__ a_") == 6
