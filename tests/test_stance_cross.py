"""The stance cross-encoder (app/stance_cross.py), its training (app/training/stance_cross.py) and its use by
StanceModel above the stance depth."""

import numpy as np
import pytest

from app.errors import ToucheError
from app.records import Topic
from app.stance import _with_side
from app.stance_cross import DEFAULT_MODEL, StanceCrossEncoder
from app.training.stance import ControversialExample
from app.training.stance_cross import (CROSS_SETS, QUESTION_SHARE, Recipe, _sets, as_question, fit,
                                       lower_states, negated, opposite, predict_states, question_form,
                                       restatements)

SMOKING = Topic("1", "Should smoking in public places be banned?")
TEXTS = ["Second-hand smoke harms bystanders, so it must be banned.",
         "Adults must stay free to decide where they smoke.",
         "Our store sells furniture and garden tools."]
LABELS = ("PRO", "CON")
TINY = Recipe(layers=1, max_length=32, epochs=2, lr=1e-3)


def _fresh(labels=LABELS, task="controversial", seed=13):
    import torch

    torch.manual_seed(seed)
    return StanceCrossEncoder.create(labels, task, TINY.layers, TINY.max_length)


@pytest.mark.parametrize("statement, question", [
    ("We should ban human cloning", "Should We ban human cloning?"),
    ("Payday loans should be banned.", "Should Payday loans be banned?"),
    ("This house would build the Keystone XL pipeline", "Should we build the Keystone XL pipeline?"),
    ("This house believes in the use of affirmative action", "Should we support the use of affirmative action?"),
    ("This house believes that bribery is sometimes acceptable", "Is bribery sometimes acceptable?"),
    ("We must bring back corporal punishment", "Should We bring back corporal punishment?"),
    ("We ought to adopt atheism", "Should We adopt atheism?"),
    ("Social media brings more harm than good", "Does Social media bring more harm than good?"),
    ("Abolish the US Electoral College", None),
    ("Do not allow companies to sell data", None),
    ("", None),
])
def test_as_question_asks_a_motion_as_touche_does(statement, question):
    assert as_question(statement) == question


def test_question_form_asks_about_the_share_it_is_given_and_repeats_with_the_seed():
    examples = [ControversialExample(f"We should ban thing {i}", f"text {i}", "PRO") for i in range(400)]
    asked = question_form(examples, 0.5, seed=13)
    questions = [e.topic for e in asked if e.topic.endswith("?")]
    assert 150 < len(questions) < 250 and all(q.startswith("Should We ban thing") for q in questions)
    assert [e.text for e in asked] == [e.text for e in examples] and question_form(examples, 0.5, seed=13) == asked
    assert question_form(examples, 0.0, seed=13) == examples
    assert question_form([ControversialExample("Abolish X", "t", "CON")], 1.0, seed=13)[0].topic == "Abolish X"


def test_negated_and_opposite_turn_the_main_clause_only():
    assert negated("Payday loans should be banned.") == "Payday loans should not be banned"
    assert negated("Assisted suicide should not be legal") is None  # already negative
    assert negated("Limit the rights of corporations that are granted personhood") is None  # relative clause only
    assert opposite("We should ban human cloning") == "We should allow human cloning"
    assert opposite("The drinking age should be Lowered to 18") == "The drinking age should be raised to 18"
    assert opposite("We should adopt atheism") is None
    assert opposite("Schools that are legal should be funded") is None


def test_restatements_pair_a_motion_with_its_denial_and_opposite():
    examples = {(e.topic, e.text): e.label for e in restatements(["We should ban X", "We should ban X", "Adopt Y"])}
    assert examples == {
        ("We should ban X", "We should ban X"): "PRO", ("Adopt Y", "Adopt Y"): "PRO",
        ("We should ban X", "We should not ban X"): "CON", ("We should not ban X", "We should ban X"): "CON",
        ("We should ban X", "We should allow X"): "CON", ("We should allow X", "We should ban X"): "CON",
        ("We should not ban X", "We should allow X"): "PRO", ("We should allow X", "We should not ban X"): "PRO"}


def test_ibm_target_phrases_take_the_side_of_the_motion_sentiment_times_their_relation(tmp_path):
    import csv

    from app.training.stance import load_ibm_targets

    columns = ["split", "topicText", "topicTarget", "topicSentiment", "claims.claimTarget.text",
               "claims.targetsRelation"]
    ban = "This house would ban boxing"
    rows = [["train", ban, "boxing", "-1", "Boxing", "1"], ["train", ban, "boxing", "-1", "other sports", "-1"],
            ["train", ban, "boxing", "-1", "Boxing", "1"],  # a phrase is learnt once
            ["train", ban, "boxing", "-1", "", ""],  # a claim without a target adds none
            ["train", "This house would embrace multiculturalism", "multiculturalism", "1", "assimilation", "-1"],
            ["test", ban, "boxing", "-1", "a test claim", "1"]]
    folder = tmp_path / "stance" / "ibm-claim-stance"
    folder.mkdir(parents=True)
    with (folder / "claim_stance_dataset_v1.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([columns, *rows])
    found = {(e.topic, e.text): e.label for e in load_ibm_targets(tmp_path, "train")}
    assert found == {(ban, "boxing"): "CON", (ban, "Boxing"): "CON", (ban, "other sports"): "PRO",
                     ("This house would embrace multiculturalism", "multiculturalism"): "PRO",
                     ("This house would embrace multiculturalism", "assimilation"): "CON"}


def test_save_load_round_trip_keeps_predictions(tmp_path):
    model = _fresh()
    model.save(tmp_path / "cross.npz", note="toy")
    loaded = StanceCrossEncoder.load(tmp_path / "cross.npz", device="cpu", precision="fp32")
    assert loaded.labels == LABELS and loaded.metadata["note"] == "toy"
    model.precision = "fp32"
    pairs = [(SMOKING.title, text) for text in TEXTS]
    np.testing.assert_allclose(loaded.probabilities(pairs), model.probabilities(pairs), atol=2e-3)  # fp16 delta
    with np.load(tmp_path / "cross.npz") as arrays:
        names = [name for name in arrays.files if name != "metadata"]
    assert names and all(name.startswith(("bert.encoder.layer.5.", "head.")) for name in names)


def test_a_delta_past_fp16_is_not_saved_over_the_old_one(tmp_path):
    """The shipped delta is fp16: a weight past 65,504 (a training that diverged) became inf, NaN in every run."""
    import torch

    model, path = _fresh(), tmp_path / "cross.npz"
    model.save(path)
    before = path.read_bytes()
    with torch.no_grad():
        next(p for p in model.network.parameters() if p.requires_grad).view(-1)[0] = 1e6
    with pytest.raises(ToucheError, match=r"non-finite weights \(.+\); .*cross.npz not written"):
        model.save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["cross.npz"]


def test_training_sets_are_named_or_refused():
    import argparse

    assert _sets("argkp, vast") == ("argkp", "vast") and _sets("") == ()
    with pytest.raises(argparse.ArgumentTypeError, match="unknown set 'fnc1'"):
        _sets("argkp,fnc1")


def test_stance_model_reads_with_the_cross_encoder_it_is_given(tmp_path):
    from tests.test_stance import _toy_model

    _fresh().save(tmp_path / "other.npz", note="other")
    model = _toy_model()
    model.cross_path = tmp_path / "other.npz"
    assert model.cross.metadata["note"] == "other"


def test_odd_questions_and_passages_get_probabilities():
    model = _fresh()
    pairs = [("why " * 400, "short"), ("", ""), (SMOKING.title, "\x00\ufffd " * 3000), ("?", "ünïcödé 🚭")]
    probabilities = model.probabilities(pairs)
    assert probabilities.shape == (4, 2) and np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert model.probabilities([]).shape == (0, 2)


def test_load_rejects_missing_and_foreign_files(tmp_path):
    with pytest.raises(ToucheError, match="not found"):
        StanceCrossEncoder.load(tmp_path / "absent.npz")
    np.savez(tmp_path / "foreign.npz", metadata=np.asarray('{"labels": ["PRO", "CON"], "task": "controversial", '
                                                           '"trained_layers": 1, "max_length": 32}'),
             **{"bert.encoder.layer.5.output.dense.weight": np.zeros((3, 3), np.float16)})
    with pytest.raises(ToucheError, match="does not fit"):
        StanceCrossEncoder.load(tmp_path / "foreign.npz")
    model = _fresh()
    model.save(tmp_path / "partial.npz")
    with np.load(tmp_path / "partial.npz") as arrays:
        kept = {name: arrays[name] for name in arrays.files if name != "head.bias"}
    np.savez(tmp_path / "partial.npz", **kept)
    with pytest.raises(ToucheError, match="head.bias"):
        StanceCrossEncoder.load(tmp_path / "partial.npz")


def test_training_learns_and_repeats_with_the_seed():
    pairs = [("Should we ban smoking?", "Smoking kills; ban it now."),
             ("Should we ban smoking?", "Adults must be free to smoke.")] * 8
    labels = ["PRO", "CON"] * 8
    deltas = []
    for _ in range(2):
        model = _fresh()
        report = fit(model, lower_states(model, pairs), labels, TINY, seed=13)
        deltas.append(model.network.delta())
    assert report["losses"][-1] < report["losses"][0] and report["pairs"] == 16
    assert deltas[0].keys() == deltas[1].keys()
    assert all(np.array_equal(deltas[0][name], deltas[1][name]) for name in deltas[0])
    probabilities = predict_states(model, lower_states(model, pairs[:2]))
    assert probabilities[0].argmax() == 0 and probabilities[1].argmax() == 1


def test_with_side_keeps_the_heads_no_and_takes_the_side():
    head = np.asarray([[0.6, 0.2, 0.2], [0.1, 0.1, 0.8]], np.float32)  # PRO, CON, NO
    side = np.asarray([[0.1, 0.9], [0.7, 0.3]], np.float32)  # PRO, CON
    np.testing.assert_allclose(_with_side(head, ("PRO", "CON", "NO"), side, ("PRO", "CON")),
                               [[0.08, 0.72, 0.2], [0.14, 0.06, 0.8]], atol=1e-6)


def test_cross_depth_changes_only_the_top_of_controversial_rankings():
    from tests.test_stance import LAPTOP, _toy_model, _unit

    model = _toy_model()
    texts = TEXTS * 3
    embeddings = _unit(len(texts), seed=3)
    plain = model.predict(SMOKING, texts, embeddings, "controversial", embeddings[0])
    cross = _fresh()
    cross.controversial = lambda question, read: np.tile([0.0, 1.0], (len(read), 1))  # always CON
    model._cross = cross
    mixed = model.predict(SMOKING, texts, embeddings, "controversial", embeddings[0], cross_depth=4)
    assert mixed[4:] == plain[4:]
    assert {p.label for p in mixed[:4]} <= {"CON", "NO"} and "CON" in {p.label for p in mixed[:4]}
    assert model.predict(SMOKING, texts, embeddings, "controversial", embeddings[0], cross_depth=0) == plain
    comparative = model.predict(LAPTOP, texts, embeddings, query_embeddings=embeddings[0])
    assert model.predict(LAPTOP, texts, embeddings, query_embeddings=embeddings[0], cross_depth=4) == comparative


@pytest.mark.slow
def test_shipped_cross_encoder_loads_small_with_its_measurements():
    model = StanceCrossEncoder.load(device="cpu")
    assert model.task == "controversial" and model.labels == LABELS
    assert model.metadata["training"]["pairs"] > 10_000 and model.metadata["metrics"]["argq_test"]["n"] > 5000
    assert model.metadata["sets"] == list(CROSS_SETS) and model.metadata["metrics"]["argkp_test"]["n"] > 500
    assert model.metadata["question_share"] == QUESTION_SHARE
    assert model.metadata["training"]["train_pairs"]["asked"] > 0.4 * model.metadata["training"]["pairs"]
    layers = model.metadata["recipe"]["layers"]
    assert DEFAULT_MODEL.stat().st_size < 3.5e6 * layers + 1e5  # top layers in fp16, not a model


@pytest.mark.slow
@pytest.mark.parametrize("topic", ["We should ban smoking in public places",
                                   "Should smoking in public places be banned?"])
def test_shipped_controversial_cross_encoder_reads_the_side(topic):
    model = StanceCrossEncoder.load(device="cpu")
    probabilities = model.controversial(topic, [
        "Second-hand smoke harms bystanders, so smoking in public must be banned.",
        "A ban on smoking in public would violate the personal freedom of adults.",
    ])
    assert [model.labels[i] for i in probabilities.argmax(axis=1)] == ["PRO", "CON"]


def test_no_training_source_keeps_a_motion_that_restates_a_reported_one(monkeypatch, tmp_path):
    """IBM Claim Stance train held an ArgQ test motion and Perspectrum ArgQ dev / test and ArgKP test motions: only
    the extra sets were kept off every reported motion, and "15 unseen motions" was not so."""
    from app.training import stance_cross as trainer

    def examples(*topics):
        return [ControversialExample(topic, f"a text on {topic}", "PRO") for topic in topics]

    split_of = {("argq", "train"): examples("argq train motion", "argkp test motion"),
                ("argq", "dev"): examples("argq dev motion"), ("argq", "test"): examples("argq test motion"),
                ("ibm", "train"): examples("ibm train motion", "argq test motion"),
                ("ibm", "test"): examples("ibm test motion"),
                ("perspectrum", ("train", "dev")): examples("perspectrum claim", "argq dev motion",
                                                            "perspectrum test claim"),
                ("perspectrum", ("test",)): examples("perspectrum test claim"),
                ("argkp", ("test",)): examples("argkp test motion"),
                ("extra", ("argkp",)): examples("argkp train motion", "ibm test motion")}
    monkeypatch.setattr(trainer, "load_argq", lambda data, split, *confidence: split_of["argq", split])
    monkeypatch.setattr(trainer, "load_ibm_claims", lambda data, split: split_of["ibm", split])
    monkeypatch.setattr(trainer, "load_perspectrum", lambda data, splits=("train", "dev"): split_of["perspectrum",
                                                                                                      splits])
    monkeypatch.setattr(trainer, "load_argkp", lambda data, splits: split_of["argkp", splits])
    monkeypatch.setattr(trainer, "load_extra_sets", lambda data, sets: split_of["extra", sets])
    monkeypatch.setattr(trainer, "load_ibm_targets", lambda data, split: [])
    monkeypatch.setattr(trainer, "load_vast", lambda data, split: [])
    trained = []
    monkeypatch.setattr(trainer, "_create", lambda *args: None)
    monkeypatch.setattr(trainer, "lower_states", lambda model, pairs: trained.extend(pairs) or pairs)
    monkeypatch.setattr(trainer, "fit", lambda *args: {})
    monkeypatch.setattr(trainer, "measure_controversial", lambda model, tests: {})
    topics = sorted({topic for examples in split_of.values() for topic in (e.topic for e in examples)})

    def embed(texts):  # the same motion (as asked or written) is the same vector, any other orthogonal
        return np.array([[float(trainer.question_or_motion(text) == trainer.question_or_motion(topic)
                                or text == topic) for topic in topics] for text in texts], dtype=np.float32)

    trainer.train_controversial(tmp_path, embed, 13, sets=("argkp",), question_share=0.0)
    assert {text.removeprefix("a text on ") for _, text in trained} == {
        "argq train motion", "ibm train motion", "perspectrum claim", "argkp train motion"}
