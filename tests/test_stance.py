from dataclasses import replace

import numpy as np
import pytest

from app.errors import ToucheError
from app.records import COMPARATIVE_LABELS, CONTROVERSIAL_LABELS, Topic
from app.relevance import QUERY_NAMES
from app.stance import (FEATURE_NAMES, SoftmaxHead, StanceModel,
                        balance_stance, controversial_features, decode_comparative, find_mentions,
                        lexical_features, mirrored_lexical, symmetric_probabilities, task_kind,
                        topic_polarity)

LAPTOP = Topic("2", "Which is better, a laptop or a desktop?", objects=("laptop", "desktop"))
TENURE = Topic("51", "Should teachers get tenure?")


def test_pool_windows_reads_a_documents_passages_together():
    """The mean of their log-probabilities, renormalised; a document of one passage keeps its row exactly."""
    from app.stance import pool_windows

    rows = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.1, 0.4, 0.4], [0.25, 0.25, 0.25, 0.25]], dtype=np.float32)
    pooled = pool_windows(rows, [2, 1])
    expected = np.sqrt(rows[0] * rows[1]) / np.sqrt(rows[0] * rows[1]).sum()
    np.testing.assert_allclose(pooled[0], expected, rtol=1e-6)
    assert pooled[1].tobytes() == rows[2].tobytes() and pooled.dtype == np.float32
    assert pool_windows(rows, [1, 1, 1]).tobytes() == rows.tobytes()
    with pytest.raises(ValueError):
        pool_windows(rows, [2, 2])


def test_task_kind_from_objects_override_and_hook():
    assert task_kind([TENURE, LAPTOP]) == "comparative"
    assert task_kind([TENURE]) == "controversial"
    assert task_kind([TENURE], comparative=lambda topic: "better" in topic.title) == "controversial"
    assert task_kind([Topic("1", "Is tea better than coffee?")], comparative=lambda t: "better" in t.title) \
        == "comparative"
    assert task_kind([LAPTOP], override="controversial") == "controversial"
    better = [Topic(str(n), "Is communism better than democracy?") for n in range(4)]
    should = [Topic(str(n), "Should teachers get tenure?") for n in range(4, 50)]
    assert task_kind(better + should, comparative=lambda t: "better" in t.title) == "controversial"  # 2021 Task 1
    assert task_kind(better + should[:4], comparative=lambda t: "better" in t.title) == "comparative"
    # Documents stating PRO / CON (args.me): one topic read as a comparison made a run of args.me comparative.
    assert task_kind(better[:1], comparative=lambda t: "better" in t.title, stated=True) == "controversial"
    assert task_kind([LAPTOP], stated=True) == "comparative"  # named objects ask for sides whatever the corpus
    with pytest.raises(ToucheError):
        task_kind([LAPTOP], override="argumentative")


def test_find_mentions():
    text = "Laptops are better than a desktop. A laptop-bag? No desktops."
    first, second = find_mentions(text, "laptop"), find_mentions(text, "desktop")
    assert [text[s:e] for s, e in first] == ["Laptops", "laptop"]
    assert [text[s:e] for s, e in second] == ["desktop", "desktops"]
    assert find_mentions("C++ or C#", "C++") == [(0, 3)]
    assert find_mentions("Boxes or bags? A bus, two buses, watches", "box") == [(0, 5)]
    assert [len(find_mentions("A bus, two buses, watches", name)) for name in ("bus", "watch")] == [2, 1]


def test_an_object_named_inside_the_others_name_is_not_mentioned_there():
    """A text about C++ alone named C too, so the sides tied: NEUTRAL for "I prefer C++" on C vs C++."""
    from app.stance import object_mentions

    text = "I prefer C++. C++ is faster than C, and green tea beats tea."
    first, second = object_mentions(text, ("C", "C++"))
    assert [text[s:e] for s, e in first] == ["C"] and [text[s:e] for s, e in second] == ["C++", "C++"]
    first, second = object_mentions(text, ("green tea", "tea"))
    assert [text[s:e] for s, e in first] == ["green tea"] and [text[s:e] for s, e in second] == ["tea"]
    assert object_mentions("Java or JavaScript", ("Java", "JavaScript")) == ([(0, 4)], [(8, 18)])
    assert object_mentions("two cars", ("car", "cars")) == ([(4, 8)], [(4, 8)])  # one span of both: each's
    model = StanceModel.load()
    topic = Topic("1", "Is C better than C++?", objects=("C", "C++"))
    assert [p.label for p in model.predict(topic, ["I prefer C++. C++ is faster, safer and easier."])] == ["SECOND"]


def test_an_object_in_capitals_that_spells_a_common_word_is_found_in_capitals_only():
    """"Tell us what you think" took the US's side."""
    assert find_mentions("Tell us what the US and the U.S. do", "US") == [(17, 19)]
    assert find_mentions("IT jobs: it pays", "IT") == [(0, 2)]
    assert len(find_mentions("PHP or php, Mac or MAC", "PHP")) == 2  # a name that spells no word: any case
    assert len(find_mentions("a Mac and a MAC", "MAC")) == 2


def test_comparative_features_see_each_query_and_the_title_stands_for_all():
    from app.stance import comparative_features

    passages, queries = _unit(2, seed=1), _unit(len(QUERY_NAMES), seed=2)
    lexical = np.zeros((2, len(FEATURE_NAMES)), np.float32)
    features = comparative_features(passages, lexical, queries)
    assert features.shape == (2, 384 + len(FEATURE_NAMES) + len(QUERY_NAMES))
    np.testing.assert_allclose(features[:, -len(QUERY_NAMES):], passages @ queries.T, rtol=1e-5)
    per_passage = comparative_features(passages, lexical, np.stack([queries, queries]))
    np.testing.assert_allclose(per_passage, features)
    title_only = comparative_features(passages, lexical, queries[0])
    np.testing.assert_allclose(title_only[:, -len(QUERY_NAMES):], np.repeat(passages @ queries[:1].T, 4, axis=1),
                               rtol=1e-5)


def test_comparative_side_is_named_only_when_the_head_can_tell_which():
    # columns in COMPARATIVE_LABELS order: FIRST, SECOND, NEUTRAL, NO
    probabilities = np.array([[0.40, 0.30, 0.20, 0.10],
                              [0.3502, 0.3500, 0.10, 0.20],   # sides tied: the likelier of NEUTRAL and NO
                              [0.3500, 0.3502, 0.25, 0.05],
                              [0.10, 0.10, 0.20, 0.60]])
    predictions = decode_comparative(probabilities, COMPARATIVE_LABELS)
    assert [p.label for p in predictions] == ["FIRST", "NO", "NEUTRAL", "NO"]
    assert predictions[1].confidence == pytest.approx(0.20) and predictions[0].confidence == pytest.approx(0.40)


def test_symmetric_probabilities_exchange_the_sides_exactly_when_the_objects_swap():
    rng = np.random.default_rng(3)
    head = SoftmaxHead(COMPARATIVE_LABELS, np.zeros(6, np.float32), np.ones(6, np.float32),
                      rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32))
    forward, backward = rng.normal(size=(5, 6)).astype(np.float32), rng.normal(size=(5, 6)).astype(np.float32)
    one, other = symmetric_probabilities(head, forward, backward), symmetric_probabilities(head, backward, forward)
    np.testing.assert_allclose(one[:, [0, 1, 2, 3]], other[:, [1, 0, 2, 3]], atol=1e-7)
    np.testing.assert_allclose(one.sum(axis=1), 1.0, rtol=1e-6)
    # texts whose features read the same in both orders tie on the sides, so decode_comparative names none
    tied = symmetric_probabilities(head, forward, forward)
    np.testing.assert_allclose(tied[:, 0], tied[:, 1], atol=1e-7)
    assert {p.label for p in decode_comparative(tied, COMPARATIVE_LABELS)} <= {"NEUTRAL", "NO"}


@pytest.mark.parametrize("with_side", [False, True])
def test_mirrored_lexical_is_the_lexical_reading_with_the_objects_swapped(with_side):
    from app.stance import comparative_lexical

    side = StanceModel.load().side if with_side else None
    texts = ["The laptop is better than the desktop, and laptops are cheaper.", "Desktops win. A laptop? Never.",
             "Laptops are lighter than desktops, but a desktop is faster than a laptop.", "Nothing to see here."]
    forward = comparative_lexical(texts, ("laptop", "desktop"), side=side)
    backward = comparative_lexical(texts, ("desktop", "laptop"), side=side)
    assert not np.array_equal(forward, backward)
    np.testing.assert_array_equal(mirrored_lexical(forward), backward)


def test_lexical_features_see_which_object_is_favoured():
    text = "The laptop is better than the desktop."
    spans = find_mentions(text, "laptop"), find_mentions(text, "desktop")
    forward = dict(zip(FEATURE_NAMES, lexical_features(text, *spans)))
    backward = dict(zip(FEATURE_NAMES, lexical_features(text, *spans[::-1])))
    assert forward["first_favoured"] > 0 and forward["second_favoured"] == 0
    assert backward["second_favoured"] > 0 and backward["first_favoured"] == 0
    assert forward["both"] == 1.0


def test_only_a_sentence_naming_one_object_praises_it_alone():
    text = "The laptop is better than the desktop. The laptop is great."
    spans = find_mentions(text, "laptop"), find_mentions(text, "desktop")
    features = dict(zip(FEATURE_NAMES, lexical_features(text, *spans)))
    assert features["first_alone_positive"] == pytest.approx(np.log1p(1))  # "great", not "better"
    assert features["second_alone_positive"] == 0.0


@pytest.mark.parametrize("title, polarity", [
    ("Should teachers get tenure?", 1.0),
    ("Should the death penalty be abolished?", -1.0),
    ("This house would ban boxing", -1.0),
    ("Should states not subsidize tobacco?", -1.0),
    ("Is social media harmful?", -1.0),
    ("Should we legalize cannabis?", 1.0),
    ("Should we end the death penalty?", -1.0),
    ("Should we stop animal testing?", -1.0),
])
def test_topic_polarity(title, polarity):
    assert topic_polarity(title) == polarity


def test_controversial_features_sign_the_document_by_topic_polarity():
    documents, topic = _unit(3, seed=1), _unit(1, seed=2)[0]
    supports, opposes = controversial_features(documents, topic, 1.0), controversial_features(documents, topic, -1.0)
    np.testing.assert_allclose(supports[:, :384], -opposes[:, :384])
    np.testing.assert_allclose(supports[:, 384:], opposes[:, 384:])
    per_row = controversial_features(documents, topic, np.asarray([1.0, -1.0, 1.0]))
    np.testing.assert_allclose(per_row[1], opposes[1])


@pytest.mark.parametrize("labels, expected", [
    (["PRO", "PRO", "CON", "PRO", "CON"], [0, 2, 1, 4, 3]),
    (["FIRST", "NO", "FIRST", "SECOND"], [0, 1, 3, 2]),
    (["PRO", "PRO", "PRO"], [0, 1, 2]),
    (["NEU", "CON", "CON", "PRO"], [0, 1, 3, 2]),
])
def test_balance_stance_alternates_within_top_k(labels, expected):
    assert balance_stance(labels, k=10) == expected


def test_balance_stance_leaves_the_tail_and_respects_pool():
    labels = ["PRO"] * 4 + ["NO"] * 30 + ["CON"]
    assert balance_stance(labels, k=3) == list(range(len(labels)))  # the CON is beyond the default pool of 6
    assert balance_stance(["PRO"] * 10 + ["CON"])[:2] == [0, 10]  # within the default pool of 20
    order = balance_stance(labels, k=3, pool=len(labels))
    assert order[:3] == [0, 34, 1] and order[3:] == [2, 3] + list(range(4, 34))
    assert sorted(order) == list(range(len(labels)))


def _toy_model():
    rng = np.random.default_rng(0)
    comparative_dim, controversial_dim = 384 + len(FEATURE_NAMES) + len(QUERY_NAMES), 2 * 384 + 1  # see app.stance

    def head(labels, dim):
        return SoftmaxHead(labels, np.zeros(dim, np.float32), np.ones(dim, np.float32),
                          rng.normal(size=(dim, len(labels))).astype(np.float32),
                          np.zeros(len(labels), np.float32))

    return StanceModel(head(COMPARATIVE_LABELS, comparative_dim), head(("PRO", "CON", "NO"), controversial_dim),
                       metadata={"note": "toy"})


def test_save_load_round_trip(tmp_path):
    model = _toy_model()
    model.save(tmp_path / "stance.npz")
    loaded = StanceModel.load(tmp_path / "stance.npz")
    features = np.ones((2, model.comparative.mean.shape[0]), np.float32)
    np.testing.assert_allclose(loaded.comparative.probabilities(features), model.comparative.probabilities(features),
                               rtol=1e-6)
    assert loaded.metadata["note"] == "toy" and loaded.controversial.labels == ("PRO", "CON", "NO")


def test_a_model_of_non_finite_weights_is_not_saved_over_the_old_one(tmp_path):
    """A training that diverged (or saw no data) gave NaN probabilities in every later run, written with exit 0."""
    model, path = _toy_model(), tmp_path / "stance.npz"
    model.save(path)
    before = path.read_bytes()
    model.comparative.weights[0, 0] = np.nan
    with pytest.raises(ToucheError, match=r"non-finite weights \(comparative_weights\); .*stance.npz not written"):
        model.save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["stance.npz"]


def test_load_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(ToucheError):
        StanceModel.load(tmp_path / "absent.npz")


def test_predict_with_given_embeddings_without_objects_mentioned(monkeypatch):
    model = _toy_model()
    monkeypatch.setattr(model, "_encode", lambda texts: _unit(len(texts), seed=len(texts)))
    texts = ["Nothing about either machine here.", "Weather is nice today."]
    predictions = model.predict(LAPTOP, texts, embeddings=_unit(2, seed=5))
    assert [p.label in COMPARATIVE_LABELS for p in predictions] == [True, True]
    assert all(0.0 <= p.confidence <= 1.0 for p in predictions)
    controversial = model.predict(TENURE, texts, embeddings=_unit(2, seed=5), task="controversial")
    assert all(p.label in CONTROVERSIAL_LABELS for p in controversial)
    assert model.predict(LAPTOP, []) == []


def test_a_comparative_topic_without_objects_is_read_for_neutral_or_no_with_a_warning(caplog):
    """`questions.with_objects` gives a topic the objects its question names, once; a topic still without them has
    no side to take (the stance model does not look for them in its question again), but its texts are still read
    for NEUTRAL or NO: labelling them all NO lost the NEUTRAL class (dev macro-F1 0.166 against 0.289)."""
    unnamed = Topic("3", "Which is better, a laptop or a desktop?")
    texts = ["Laptops are better than desktops.", "A laptop and a desktop both have their uses.", "Nice weather."]
    model = StanceModel.load()
    with caplog.at_level("WARNING"):
        predictions = model.predict(unnamed, texts, task="comparative")
    assert {p.label for p in predictions} <= {"NEUTRAL", "NO"} and "topic 3 names no objects" in caplog.text
    assert all(0.0 < p.confidence < 1.0 for p in predictions)
    named = model.predict(replace(unnamed, objects=("laptop", "desktop")), texts[:1], task="comparative")
    assert named[0].label == "FIRST"


def _unit(n, seed):
    vectors = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _alike_head(model, bias):
    """Give `model` a controversial head that reads every text alike: softmax(bias) over PRO, CON, NO."""
    dim = model.controversial.mean.shape[0]
    model.controversial = SoftmaxHead(("PRO", "CON", "NO"), np.zeros(dim, np.float32), np.ones(dim, np.float32),
                                     np.zeros((dim, 3), np.float32), np.asarray(bias, np.float32))


CLEAR = [
    "A laptop is much better than a desktop: you can carry a laptop everywhere, so I prefer laptops.",
    "Desktops are far better than laptops. A desktop is faster, cheaper and easier to upgrade than a laptop.",
    "Our store sells furniture, lamps and garden tools at low prices.",
]


@pytest.mark.slow
def test_shipped_comparative_head_reads_direction_and_is_symmetric():
    from app.encoder import encode
    from app.stance import comparative_features, comparative_lexical

    model = StanceModel.load()
    embeddings, topic = encode(CLEAR), encode([LAPTOP.title])[0]
    one_way = model.comparative.probabilities(
        comparative_features(embeddings, comparative_lexical(CLEAR, ("laptop", "desktop"), side=model.side), topic))
    first, second = COMPARATIVE_LABELS.index("FIRST"), COMPARATIVE_LABELS.index("SECOND")
    assert one_way[0, first] > one_way[0, second] and one_way[1, second] > one_way[1, first]
    # The head alone is symmetric up to the solver's tolerance (it was trained on object-swapped copies); the run
    # reads both orders, which is symmetric exactly.
    forward = model.comparative_probabilities(CLEAR, ("laptop", "desktop"), embeddings, topic)
    backward = model.comparative_probabilities(CLEAR, ("desktop", "laptop"), embeddings, topic)
    np.testing.assert_allclose(forward[:, [first, second]], backward[:, [second, first]], atol=1e-6)
    assert forward[0, first] > forward[0, second] and forward[1, second] > forward[1, first]
    assert [p.label for p in model.predict(LAPTOP, CLEAR)][2] == "NO"


@pytest.mark.slow
def test_shipped_controversial_head_says_no_for_unrelated_text():
    model = StanceModel.load()
    topic = Topic("1", "Should the death penalty be abolished?")
    predictions = model.predict(topic, [
        "The death penalty should be abolished because innocent people are executed.",
        "Our store sells furniture, lamps and garden tools at low prices.",
    ], task="controversial")
    assert predictions[0].label in ("PRO", "CON", "NEU") and predictions[1].label == "NO"


def test_neutral_head_turns_only_sides_into_neu_and_is_saved(tmp_path):
    from app.stance import NEUTRAL_LABELS

    model = _toy_model()
    dim = model.controversial.mean.shape[0]
    model.neutral = SoftmaxHead(NEUTRAL_LABELS, np.zeros(dim, np.float32), np.ones(dim, np.float32),
                               np.zeros((dim, 2), np.float32), np.asarray([0.0, 1.0], np.float32))  # NEU wins
    probabilities = np.asarray([[0.6, 0.3, 0.1], [0.3, 0.6, 0.1], [0.1, 0.1, 0.8]], np.float32)  # PRO, CON, NO
    decoded = model._decode_controversial(probabilities, np.asarray([0.7, 0.2, 0.9]))
    assert [p.label for p in decoded] == ["NEU", "CON", "NO"]  # no margin rule beside a neutral head
    model.save(tmp_path / "stance.npz")
    loaded = StanceModel.load(tmp_path / "stance.npz")
    assert loaded.neutral is not None and loaded.neutral.labels == NEUTRAL_LABELS
    texts = ["Tenure protects teachers."] * 2
    predicted = loaded.predict(TENURE, texts, embeddings=_unit(2, seed=3), task="controversial",
                               query_embeddings=_unit(1, seed=4))
    assert {p.label for p in predicted} <= {"NEU", "NO"}


def test_a_stated_side_weighs_with_the_texts_and_the_heads_no_stays():
    from app.stance import _with_stated

    head = np.asarray([[0.3, 0.6, 0.1], [0.3, 0.6, 0.1], [0.1, 0.1, 0.8]], np.float32)  # PRO, CON, NO
    stated = np.asarray([[0.99, 0.01], [0.5, 0.5], [0.9, 0.1]], np.float32)  # P(PRO), P(CON)
    weighed = _with_stated(head, ("PRO", "CON", "NO"), stated)
    assert weighed[0].argmax() == 0  # a confident statement decides the side
    np.testing.assert_allclose(weighed[1], head[1], atol=1e-6)  # an unsure one leaves the text's reading
    assert weighed[2].argmax() == 2 and weighed[2, 2] == pytest.approx(0.8)  # taking no side is the head's call
    np.testing.assert_allclose(weighed.sum(axis=1), 1.0, atol=1e-6)


def test_predict_turns_a_stated_stance_toward_the_topic(monkeypatch):
    from app.stance import NEUTRAL_LABELS

    model = _toy_model()
    _alike_head(model, [1.0, 1.0, 0.0])
    dim = model.controversial.mean.shape[0]
    model.neutral = SoftmaxHead(NEUTRAL_LABELS, np.zeros(dim, np.float32), np.ones(dim, np.float32),
                               np.zeros((dim, 2), np.float32), np.asarray([0.0, 1.0], np.float32))  # NEU wins
    oriented = {"Tenure should be abolished": [0.02, 0.98], "Teachers should get tenure": [0.97, 0.03]}
    asked = []

    def orient(topic, statements, topic_embedding=None, cross=True):
        asked.append((list(statements), cross))
        return np.asarray([oriented[s] for s in statements], np.float32)

    monkeypatch.setattr(model, "orient", orient)
    stated = [("PRO", "Tenure should be abolished"), ("CON", "Tenure should be abolished"),
              ("PRO", "Teachers should get tenure"), None]
    predicted = model.predict(TENURE, ["text"] * 4, _unit(4, seed=1), "controversial", _unit(1, seed=2),
                              stated=stated)
    assert [p.label for p in predicted] == ["CON", "PRO", "PRO", "NEU"]  # a stated side is never NEU
    assert asked == [(["Teachers should get tenure", "Tenure should be abolished"], False)]  # each statement once
    assert [p.label for p in model.predict(TENURE, ["text"] * 4, _unit(4, seed=1), "controversial",
                                           _unit(1, seed=2))] == ["NEU"] * 4


def test_an_argument_is_read_without_the_conclusion_it_opens_with():
    from app.stance import _without_statement

    conclusion = "Teachers should get tenure"
    text = "Teachers should get tenure It lets bad teachers stay for decades."
    assert _without_statement(text, ("CON", conclusion)) == "It lets bad teachers stay for decades."
    assert _without_statement(text, None) == text
    later = "A later window of the argument."
    assert _without_statement(later, ("CON", conclusion)) == later
    assert _without_statement(conclusion, ("PRO", conclusion)) == conclusion  # nothing else to read: read it all


def test_the_cross_encoder_reads_a_stated_argument_without_its_conclusion(monkeypatch):
    model = _toy_model()
    read = []

    class Cross:
        labels = ("PRO", "CON")

        def controversial(self, question, texts):
            read.append(list(texts))
            return np.tile(np.asarray([[0.9, 0.1]], np.float32), (len(texts), 1))

    model._cross = Cross()
    _alike_head(model, [1.0, 1.0, 0.0])
    monkeypatch.setattr(model, "orient", lambda topic, statements, topic_embedding=None, cross=True:
                        np.full((len(statements), 2), 0.5, np.float32))
    texts = ["Tenure should be abolished It shields bad teachers.", "Tenure protects teachers.", "Below the depth."]
    predicted = model.predict(TENURE, texts, _unit(3, seed=1), "controversial", _unit(1, seed=2), cross_depth=2,
                              stated=[("CON", "Tenure should be abolished"), None, ("PRO", "Below the depth.")])
    assert read == [["It shields bad teachers.", "Tenure protects teachers."]]  # the top two only
    assert [p.label for p in predicted[:2]] == ["PRO", "PRO"]  # unsure conclusions: the texts' readings decide
    read.clear()
    model.controversial.bias[:] = [0.0, 0.0, 2.0]  # the head is sure no text takes a side: nothing to read
    assert [p.label for p in model.predict(TENURE, texts, _unit(3, seed=1), "controversial", _unit(1, seed=2),
                                           cross_depth=2)] == ["NO"] * 3
    assert read == []


def test_a_post_hears_the_other_posts_of_its_debate_by_their_turns():
    model = _toy_model()

    class Cross:
        labels = ("PRO", "CON")

        def controversial(self, question, texts):  # sure of the first post, unsure of the second
            sides = {"Tenure protects good teachers.": [0.95, 0.05], "Well, it depends.": [0.45, 0.55]}
            return np.asarray([sides.get(text, [0.5, 0.5]) for text in texts], np.float32)

    model._cross = Cross()
    _alike_head(model, [1.0, 1.0, 0.0])
    texts = ["Tenure protects good teachers.", "Well, it depends.", "Well, it depends."]
    alone = model.predict(TENURE, texts, _unit(3, seed=1), "controversial", _unit(1, seed=2), cross_depth=3)
    assert [p.label for p in alone] == ["PRO", "CON", "CON"]
    # Posts 0 and 1 of one debate argue opposite sides, posts 0 and 2 the same one.
    heard = model.predict(TENURE, texts, _unit(3, seed=1), "controversial", _unit(1, seed=2), cross_depth=3,
                          turns=[("d", 0), ("d", 1), ("d", 2)])
    assert [p.label for p in heard] == ["PRO", "CON", "PRO"]
    stated = model.predict(TENURE, texts, _unit(3, seed=1), "controversial", _unit(1, seed=2), cross_depth=3,
                           turns=[("d", 0), ("d", 1), ("e", 2)])
    assert [p.label for p in stated] == ["PRO", "CON", "CON"]  # another debate: nothing to hear
    # Posts not read (below the rerank depth) are labelled by the posts read of their debate, or not at all.
    tail = model.predict(TENURE, texts, _unit(3, seed=1), "controversial", _unit(1, seed=2), cross_depth=3,
                         turns=[("d", 0), ("d", 1), ("d", 2)], unread_turns=[("d", 3), ("d", 4), ("x", 0)])
    assert [p.label for p in tail] == ["PRO", "CON", "PRO", "CON", "PRO", "Q0"]
    assert [p.label for p in model.predict(TENURE, [], None, "controversial", cross_depth=3,
                                           unread_turns=[("d", 3)])] == ["Q0"]


def test_a_side_may_win_only_where_the_heads_no_does_not():
    from app.stance import _may_take_side

    probabilities = np.asarray([[0.3, 0.3, 0.4], [0.2, 0.1, 0.7], [0.25, 0.25, 0.5]], np.float32)
    assert _may_take_side(probabilities, ("PRO", "CON", "NO")).tolist() == [True, False, True]
    assert _may_take_side(probabilities[:, :2], ("PRO", "CON")).all()


@pytest.mark.parametrize("statement, question, sentiment", [
    ("Death Penalty", "Should the death penalty be abolished?", 1.0),
    ("abortion", "Should abortion be legal?", 1.0),
    ("Teacher tenure", "Should teachers get tenure?", 1.0),  # the same stems
    ("Uniforms in schools", "Should students have to wear school uniforms?", 1.0),
    ("Teacher tenure should be abolished", "Should teachers get tenure?", -1.0),
    ("Abolish the death penalty", "Should the death penalty be abolished?", -1.0),
    ("We should ban abortion", "Should abortion be legal?", -1.0),
    ("Abortion shouldn't be banned", "Should abortion be legal?", 1.0),  # each word against a target turns it
    ("Government should ban the death penalty for murder", "Should the government ban the death penalty for murder?",
     -1.0),  # 8 words of the question's own: within the bound
    ("Abortion is murder", "Should abortion be legal?", None),  # says more than the question's words
    ("Capital punishment", "Should the death penalty be abolished?", None),
    ("Should not", "Should gay marriage be legal?", None),  # names nothing
    # a comparison's order is its meaning: the reversed one took the question's side at 0.9
    ("Democracy is better than communism", "Is communism better than democracy?", None),
    ("Communism is better than democracy", "Is communism better than democracy?", 1.0),
    ("", "Should gay marriage be legal?", None),
])
def test_a_statement_about_the_questions_subject_alone_is_told_apart(statement, question, sentiment):
    from app.stance import subject_sentiment

    assert subject_sentiment(statement, question) == sentiment


def test_a_subject_is_oriented_by_the_questions_polarity_and_the_rest_read(monkeypatch):
    from app.stance import SUBJECT_CONFIDENCE

    model = _toy_model()
    read = []

    def _read_sides(topic, statements, topic_embedding, cross):
        read.append(list(statements))
        return np.full((len(statements), 2), 0.5, np.float32)

    monkeypatch.setattr(model, "_read_sides", _read_sides)
    abolish = Topic("7", "Should the death penalty be abolished?")
    sides = model.orient(abolish, ["Death Penalty", "Death penalty should be abolished", "Capital punishment is just"])
    np.testing.assert_allclose(sides, [[1 - SUBJECT_CONFIDENCE, SUBJECT_CONFIDENCE],
                                       [SUBJECT_CONFIDENCE, 1 - SUBJECT_CONFIDENCE], [0.5, 0.5]])
    assert read == [["Capital punishment is just"]]  # statements about the subject alone are not read
    legal = model.orient(Topic("8", "Should the death penalty be legal?"), ["the death penalty"])
    np.testing.assert_allclose(legal, [[SUBJECT_CONFIDENCE, 1 - SUBJECT_CONFIDENCE]])
    assert read == [["Capital punishment is just"]]


def test_unread_stated_stances_are_labelled_by_their_statements_orientation_read_once_per_question(monkeypatch):
    model = _toy_model()
    oriented = {"Tenure should be abolished": [0.1, 0.9], "Teachers should get tenure": [0.8, 0.2]}
    read = []

    def _orient(topic, statements, topic_embedding, cross):
        read.append((topic.title, list(statements), cross))
        return np.asarray([oriented[s] for s in statements], np.float32).reshape(-1, 2)

    monkeypatch.setattr(model, "_orient", _orient)
    stated = [("PRO", "Tenure should be abolished"), ("CON", "Tenure should be abolished"),
              ("CON", "Teachers should get tenure")]

    def tail(topic, unread, cross_depth=10):
        return model.predict(topic, [], task="controversial", query_embeddings=_unit(1, seed=2),
                             cross_depth=cross_depth, unread=unread)

    predicted = tail(TENURE, stated)
    assert [p.label for p in predicted] == ["CON", "PRO", "CON"]
    assert [p.confidence for p in predicted] == pytest.approx([0.9, 0.9, 0.8])
    assert tail(TENURE, stated[:1]) == predicted[:1]  # read already: not again
    assert tail(TENURE, stated[:1], cross_depth=0)[0].label == "CON"  # another reader reads anew
    other = Topic("2", "Should tenure be abolished?")
    tail(other, stated[2:])
    assert read == [(TENURE.title, ["Teachers should get tenure", "Tenure should be abolished"], True),
                    (TENURE.title, ["Tenure should be abolished"], False),
                    (other.title, ["Teachers should get tenure"], True)]
    assert tail(TENURE, []) == []
    with pytest.raises(ValueError):
        model.predict(TENURE, [], task="comparative", unread=stated)


def test_a_statements_orientation_is_heard_from_the_texts_that_state_a_stance_toward_it(monkeypatch):
    """Arguments of one debate share their conclusion: what the read ones say turns it for all of them."""
    model = _toy_model()
    conclusion, other = "Tenure should be abolished", "Teachers should get tenure"
    monkeypatch.setattr(model, "orient", lambda topic, statements, topic_embedding=None, cross=True:
                        np.asarray([[0.8, 0.2]] * len(statements), np.float32))  # read wrongly as favouring tenure
    against, favour = np.log(0.05 / 0.95), np.log(0.95 / 0.05)  # readings: the first text CON, the second PRO
    stated = [("PRO", conclusion), ("CON", conclusion), ("PRO", conclusion), ("PRO", other)]
    sides = model.stated_sides(TENURE, stated, readings=[against, favour, None, None])
    # The conclusion now reads against tenure (0.8 -> log-odds 1.39 - 2.94 - 2.94); each row hears the other text.
    assert sides[2].argmax() == 1 and sides[2, 1] == pytest.approx(1 / (1 + np.exp(1.386 - 5.889)), abs=1e-3)
    assert sides[0, 0] == pytest.approx(1 / (1 + np.exp(-(1.386 - 2.944))), abs=1e-3)  # its own reading left out
    assert sides[1, 0] == pytest.approx(1 / (1 + np.exp(1.386 - 2.944)), abs=1e-3)  # CON toward it, heard CON
    np.testing.assert_allclose(sides[3], [0.8, 0.2], atol=1e-6)  # no text read toward it: its own orientation
    written = [("PRO", conclusion), ("CON", conclusion.upper() + "."), ("PRO", f"  {conclusion.lower()}!")]
    np.testing.assert_allclose(model.stated_sides(TENURE, written, readings=[against, favour, None]), sides[:3],
                               atol=1e-6)  # one conclusion, however it is cased or punctuated
    np.testing.assert_allclose(model.stated_sides(TENURE, stated), [[0.8, 0.2], [0.2, 0.8], [0.8, 0.2], [0.8, 0.2]],
                               atol=1e-6)

    class Cross:
        labels = ("PRO", "CON")

        def controversial(self, question, texts):
            return np.asarray([[0.05, 0.95], [0.95, 0.05]], np.float32)[: len(texts)]

    model._cross = Cross()
    _alike_head(model, [1.0, 1.0, 0.0])
    predicted = model.predict(TENURE, ["It shields bad teachers.", "It protects free speech."], _unit(2, seed=1),
                              "controversial", _unit(1, seed=2), cross_depth=2, stated=stated[:2], unread=stated[2:])
    assert [p.label for p in predicted] == ["CON", "PRO", "CON", "PRO"]  # the unread argument follows its debate


def test_a_run_reading_with_the_heads_alone_hears_a_debate_through_them(monkeypatch):
    """Without the cross-encoder the heads' readings of a debate's texts turn its conclusion, as the cross-encoder's
    do where it reads; with it, the heads' readings are not heard."""
    model = _toy_model()
    conclusion = "Tenure should be abolished"
    monkeypatch.setattr(model, "orient", lambda topic, statements, topic_embedding=None, cross=True:
                        np.asarray([[0.8, 0.2]] * len(statements), np.float32))  # read wrongly as favouring tenure
    heads = np.asarray([[0.05, 0.9, 0.05], [0.9, 0.05, 0.05], [0.45, 0.45, 0.1]], np.float32)  # PRO, CON, NO
    _alike_head(model, [0.0, 0.0, 0.0])
    monkeypatch.setattr(model.controversial, "probabilities", lambda features: heads.copy())
    model.neutral = None

    class Cross:
        labels = ("PRO", "CON")

        def controversial(self, question, texts):
            return np.full((len(texts), 2), 0.5, np.float32)  # reads nothing either way

    model._cross = Cross()
    stated = [("PRO", conclusion), ("CON", conclusion), ("PRO", conclusion)]

    def labels(cross_depth):
        return [p.label for p in model.predict(TENURE, ["a", "b", "c"], _unit(3, seed=1), "controversial",
                                               _unit(1, seed=2), cross_depth=cross_depth, stated=stated)]

    assert labels(0) == ["CON", "PRO", "CON"]  # the first two texts say the conclusion is against tenure
    assert labels(3)[2] == "PRO"  # the cross-encoder read nothing: the conclusion keeps its own orientation


def test_a_statement_is_told_apart_by_its_words():
    from app.stance import _statement_key

    assert _statement_key("Pro-life.") == _statement_key("  PRO LIFE!") == "pro life"
    assert _statement_key("?!") != _statement_key("🙂")  # without words, each is its own


@pytest.mark.slow
def test_shipped_models_orient_a_statement_toward_the_question():
    model = StanceModel.load(device="cpu")
    topic = Topic("1", "Should abortion be legal?")
    statements = ["Abortion should be legal", "Abortion should be illegal"]
    sides = model.orient(topic, statements, cross=True)
    assert sides[0].argmax() == 0 and sides[1].argmax() == 1
    np.testing.assert_allclose(sides.sum(axis=1), 1.0, atol=1e-5)
    heads = model.orient(topic, statements, cross=False)
    assert heads.shape == (2, 2) and heads[0, 0] > heads[1, 0]


@pytest.mark.slow
def test_shipped_model_has_a_neutral_head_learnt_from_vast():
    model = StanceModel.load()
    assert model.neutral is not None and "vast" in model.metadata["controversial_sets"]
    assert model.metadata["metrics"]["vast_test_macro_f1"] > 0.55


@pytest.mark.parametrize("labels", [("PRO", "CON"), ("PRO", "CON", "NO")])
def test_fit_head_learns_separable_classes(labels):
    from app.training.stance import fit_head

    rng = np.random.default_rng(1)
    centres = np.eye(len(labels), 4) * 5
    y = [labels[i % len(labels)] for i in range(60)]
    x = np.vstack([centres[labels.index(label)] for label in y]) + rng.normal(size=(60, 4))
    head = fit_head(x.astype(np.float32), y, labels, c=1.0, seed=0)
    predicted = [head.labels[i] for i in head.probabilities(x.astype(np.float32)).argmax(axis=1)]
    assert np.mean([p == g for p, g in zip(predicted, y)]) > 0.95


def test_fit_head_emphasis_lets_a_column_weigh_more_under_the_same_penalty():
    from app.training.stance import fit_head, side_emphasis
    from app.stance_side import FEATURE_NAMES as SIDE_NAMES

    rng = np.random.default_rng(2)
    y = ["PRO", "CON"] * 100
    signal = np.array([1.0 if label == "PRO" else -1.0 for label in y])
    x = np.column_stack([signal + rng.normal(size=200), signal + rng.normal(size=200)]).astype(np.float32)
    plain = fit_head(x, y, ("PRO", "CON"), c=0.01, seed=0)
    emphasised = fit_head(x, y, ("PRO", "CON"), c=0.01, seed=0, emphasis=np.array([1.0, 8.0], np.float32))
    # the same data, the second column scaled up before the L2 penalty: it carries more of the decision
    share = [abs(head.weights[1] / head.scale[1]).sum() / abs(head.weights / head.scale[:, None]).sum()
             for head in (plain, emphasised)]
    assert share[1] > share[0] + 0.2
    emphasis = side_emphasis(384 + len(FEATURE_NAMES) + len(SIDE_NAMES) + len(QUERY_NAMES))
    assert emphasis.sum() - len(emphasis) == pytest.approx(len(SIDE_NAMES) * (emphasis.max() - 1))
    assert (emphasis[384 + len(FEATURE_NAMES):384 + len(FEATURE_NAMES) + len(SIDE_NAMES)] > 1).all()


def test_texts_the_model_embeds_itself_are_embedded_at_the_runs_precision(monkeypatch):
    """--precision fp32 reached the cross-encoder but not the head's own embeddings, which took bf16 ("auto")."""
    from app import encoder

    asked = []

    def encode(texts, **options):
        asked.append((options.get("device"), options.get("precision")))
        return np.zeros((len(texts), 384), np.float32)

    monkeypatch.setattr(encoder, "encode", encode)
    model = _toy_model()
    model.device, model.precision = "cpu", "fp32"
    model._encode(["a text"])
    assert asked == [("cpu", "fp32")]


def test_topics_are_comparative_when_at_least_half_read_so_and_not_below():
    better = [Topic(str(n), "Is communism better than democracy?") for n in range(2)]
    should = [Topic(str(n), "Should teachers get tenure?") for n in range(2, 6)]

    def comparative(topic):
        return "better" in topic.title

    assert task_kind(better[:1] + should[:2], comparative=comparative) == "controversial"  # 1 of 3
    assert task_kind(better[:1] + should[:1], comparative=comparative) == "comparative"  # 1 of 2


def test_balance_stance_alternates_the_top_10_from_the_first_20():
    """--balance-stance's defaults: a CON at position 20 moves up, one at 21 does not."""
    assert balance_stance(["PRO"] * 19 + ["CON"])[:3] == [0, 19, 1]
    assert balance_stance(["PRO"] * 20 + ["CON"]) == list(range(21))
    assert balance_stance(["PRO"] * 6 + ["CON"] * 6) == [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]


def _controversial_model(neutral_margin=0.0):
    head = SoftmaxHead(("PRO", "CON", "NO"), *(np.zeros(1, np.float32) for _ in range(4)))
    return StanceModel(None, head, neutral_margin=neutral_margin)


def test_without_a_neutral_head_close_sides_are_neu_by_the_margin():
    """A model trained without the neutral head (its metadata's neutral_margin): PRO and CON within the margin
    are NEU; no margin, never NEU, a tie included."""
    probabilities = np.array([[0.45, 0.35, 0.2], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]], np.float32)
    decoded = _controversial_model(neutral_margin=0.2)._decode_controversial(probabilities)
    assert [p.label for p in decoded] == ["NEU", "PRO", "NO"]
    assert abs(decoded[0].confidence - 0.9) < 1e-6
    assert [p.label for p in _controversial_model()._decode_controversial(probabilities)] == ["PRO", "PRO", "NO"]
    tie = np.array([[0.4, 0.4, 0.2]], np.float32)
    assert [p.label for p in _controversial_model()._decode_controversial(tie)] == ["PRO"]


def test_the_neutral_head_makes_neu_only_over_one_half():
    probabilities = np.array([[0.6, 0.3, 0.1]] * 3, np.float32)
    decoded = _controversial_model()._decode_controversial(probabilities, np.array([0.4, 0.5, 0.51]))
    assert [p.label for p in decoded] == ["PRO", "PRO", "NEU"]
