"""The side model (app/stance_side.py): which of two objects a sentence favours, and its training on CompSent-19
(app/training/stance.py)."""

import numpy as np
import pytest

from app.stance import StanceModel, comparative_lexical, find_mentions
from app.stance_side import (FEATURE_NAMES, FIRST_MARK, LABELS, SECOND_MARK, SideModel, both_object_sentences, masked,
                             within)


def test_masked_replaces_each_objects_mentions():
    assert masked("Tea beats coffee.", [(0, 3)], [(10, 16)]).split() == [FIRST_MARK, "beats", SECOND_MARK, "."]
    assert masked("abcdef", [(0, 3)], [(2, 5)]) == "abcdef"  # overlapping mentions of the two objects stay
    assert masked("abcdef", [(0, 3), (1, 4)], [(4, 6)]).split() == [FIRST_MARK, "d", SECOND_MARK]
    assert masked("no objects", [], []) == "no objects"


def test_only_sentences_naming_both_objects_are_read():
    text = "Tea is calming. Coffee wakes you up. Tea is healthier than coffee, I think! Neither here."
    spans = find_mentions(text, "tea"), find_mentions(text, "coffee")
    sentences = both_object_sentences(text, *spans)
    assert len(sentences) == 1 and sentences[0].split()[:3] == [FIRST_MARK, "is", "healthier"]
    assert SECOND_MARK in sentences[0].split()
    assert both_object_sentences("", [], []) == []


def _examples(labels_and_texts):
    from app.training.stance import ComparativeExample

    examples = []
    for text, label in labels_and_texts:
        spans = find_mentions(text, "tea"), find_mentions(text, "coffee")
        examples.append(ComparativeExample("compsent", "", text, ("tea", "coffee"), spans, label))
    return examples


TOY = [("tea is better than coffee", "FIRST"), ("coffee is better than tea", "SECOND"),
       ("tea and coffee are drinks", "NONE"), ("tea is nicer than coffee", "FIRST"),
       ("coffee is nicer than tea", "SECOND"), ("i drink tea and coffee", "NONE")] * 3


def test_training_learns_the_side_symmetrically_and_features_follow_it():
    from app.training.stance import side_labels, train_side

    model = train_side(_examples(TOY), c=10.0, seed=13)
    assert side_labels(model, _examples(TOY[:3])) == ["FIRST", "SECOND", "NONE"]
    forward = model.probabilities([masked("tea is better than coffee", [(0, 3)], [(19, 25)])])
    backward = model.probabilities([masked("tea is better than coffee", [(19, 25)], [(0, 3)])])
    np.testing.assert_allclose(forward[:, [0, 1, 2]], backward[:, [1, 0, 2]], atol=1e-3)
    features = model.passage_features([[masked("tea is better than coffee", [(0, 3)], [(19, 25)])], []])
    assert features.shape == (2, len(FEATURE_NAMES)) and features[0, 2] > features[0, 3] and not features[1].any()


def test_side_features_join_the_lexical_ones_and_survive_save_and_load(tmp_path):
    from tests.test_stance import _toy_model

    side = SideModel(["better", f"{FIRST_MARK} is better"], np.asarray([[0, 0, 0], [2, -2, 0]], np.float32),
                     np.zeros(3, np.float32))
    texts = ["Tea is better than coffee.", "Nothing here."]
    plain = comparative_lexical(texts, ("tea", "coffee"))
    with_side = comparative_lexical(texts, ("tea", "coffee"), side=side)
    np.testing.assert_array_equal(with_side[:, :plain.shape[1]], plain)
    assert with_side.shape[1] == plain.shape[1] + len(FEATURE_NAMES) and with_side[0, -2] > with_side[0, -1]
    model = _toy_model()
    model.side = side
    model.save(tmp_path / "stance.npz")
    loaded = StanceModel.load(tmp_path / "stance.npz")
    assert loaded.side.vocabulary == side.vocabulary
    np.testing.assert_allclose(loaded.side.probabilities(texts), side.probabilities(texts), atol=1e-3)


@pytest.mark.slow
def test_shipped_side_model_reads_which_object_wins():
    model = StanceModel.load()
    assert model.side is not None and model.metadata["metrics"]["compsent19_test_macro_f1"] > 0.6
    text = "Python is much easier to learn than Java."
    sides = model.side.probabilities([masked(text, find_mentions(text, "python"), find_mentions(text, "java")),
                                      masked(text, find_mentions(text, "java"), find_mentions(text, "python"))])
    assert [LABELS[i] for i in sides.argmax(axis=1)] == ["FIRST", "SECOND"]


def test_mentions_are_sought_by_bisection_with_the_results_of_a_plain_scan():
    """The per-sentence scans were a product of sentences and mentions: 1.2 s for one passage of "C,R," x 5000."""
    rng = np.random.default_rng(13)
    for _ in range(200):
        spans = [tuple(sorted(rng.integers(0, 60, 2))) for _ in range(rng.integers(0, 12))]
        first = sorted((s, e + 1) for s, e in spans[: len(spans) // 2])
        second = sorted((s, e + 1) for s, e in spans[len(spans) // 2:])
        start, end = sorted(rng.integers(0, 60, 2))
        assert within(first, start, end) == [(s - start, e - start) for s, e in first if start <= s < end]
        text = "".join(chr(97 + i % 26) for i in range(64))
        plain = [(s, e) for s, e in first if not any(s < oe and os < e for os, oe in second)]
        marks = [(s, e, FIRST_MARK) for s, e in plain] + [
            (s, e, SECOND_MARK) for s, e in second if not any(s < oe and os < e for os, oe in first)]
        out, at = [], 0
        for s, e, token in sorted(marks):
            if s >= at:
                out += [text[at:s], f" {token} "]
                at = e
        assert masked(text, first, second) == "".join(out) + text[at:]


def _side_model(bias=(0.0, 0.0, 0.0)):
    """A side model whose one feature, the first object's mark, reads FIRST."""
    return SideModel([FIRST_MARK], np.asarray([[1.0, -1.0, 0.0]], np.float32), np.asarray(bias, np.float32))


def test_side_probabilities_are_probabilities_with_the_bias_and_unigrams_read_binary():
    one = _side_model().probabilities([f"{FIRST_MARK} wins"])
    twice = _side_model().probabilities([f"{FIRST_MARK} wins over {FIRST_MARK} again"])  # a word counts once
    np.testing.assert_allclose(one.sum(axis=1), 1.0, rtol=1e-6)
    assert one[0, 0] > one[0, 1]  # a one-word n-gram (the mark itself) is read
    np.testing.assert_allclose(one, twice, rtol=1e-6)
    biased = _side_model(bias=(0.0, 0.0, 2.0)).probabilities(["nothing in the vocabulary"])
    np.testing.assert_allclose(biased[0], np.exp([0, 0, 2]) / np.exp([0, 0, 2]).sum(), rtol=1e-5)


def test_each_passage_gets_the_side_features_of_its_own_sentences():
    """Each passage reads its own sentences, not the first passage's (the second was empty in the tests)."""
    features = _side_model().passage_features([[f"{FIRST_MARK} beats {SECOND_MARK}"],
                                               [f"{SECOND_MARK} beats {FIRST_MARK}"], [],
                                               [f"{SECOND_MARK} wins", f"{SECOND_MARK} again"]])
    assert features.shape == (4, len(FEATURE_NAMES))
    assert features[0, 2] == features[1, 2]  # both sentences name each side once: a tie
    assert features[3, 3] > features[3, 2] and features[3, 1] > features[3, 0]  # SECOND's sentences read SECOND
    assert not features[2].any()


def test_passages_without_a_sentence_naming_both_objects_get_zero_side_features():
    """Common on comparative topics: no passage of a topic names both objects in one sentence."""
    assert _side_model().passage_features([[], []]).tolist() == [[0.0] * len(FEATURE_NAMES)] * 2
    assert _side_model().probabilities([]).shape == (0, 3)
