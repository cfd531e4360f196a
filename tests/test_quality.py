"""Tests of the argument-quality features, head and training."""

from __future__ import annotations

import re

import numpy as np
import pytest

from app.errors import ToucheError
from app.encoder import EMBEDDING_DIM
from app.quality import FEATURE_NAMES, QualityModel, text_features
from app.training import quality as training
from app.training.common import per_topic_ndcg, topic_folds

PROSE = ("Cats are better pets than dogs because they are independent and clean. However, dogs are more loyal, "
         "so families with children often prefer them.")
MENU = "Home | About Us | Contact | Login | Register | Privacy Policy | Copyright 2012 All Rights Reserved"
SPAM = "BUY CHEAP VIAGRA NOW!!! CLICK HERE www.cheap-pills.com $$$ lol"
GOOD_ARGUMENT = (
    "Python is a better first language than PHP because its syntax is consistent and readable. For example, "
    "indentation forces beginners to structure their code clearly. However, PHP still has an advantage for "
    "cheap web hosting, since almost every provider supports it. Overall, the evidence favours Python for "
    "learning, while PHP remains a pragmatic choice for small websites.")


def column(features: np.ndarray, name: str) -> np.ndarray:
    return features[:, FEATURE_NAMES.index(name)]


def toy_model(feature_weights: np.ndarray, embedding_weights: np.ndarray | None = None) -> QualityModel:
    n = len(FEATURE_NAMES)
    return QualityModel(np.zeros(n), np.ones(n), feature_weights,
                        np.zeros(EMBEDDING_DIM) if embedding_weights is None else embedding_weights, 0.0)


def test_text_features_shape_and_empty_input():
    features = text_features([PROSE, "", MENU])
    assert features.shape == (3, len(FEATURE_NAMES))
    assert features.dtype == np.float32
    assert np.isfinite(features).all()
    assert not features[1].any()
    assert text_features([]).shape == (0, len(FEATURE_NAMES))


def test_text_features_tell_prose_from_navigation_and_spam():
    prose, menu, spam = text_features([PROSE, MENU, SPAM])
    f = np.stack([prose, menu, spam])
    assert column(f, "function_words")[0] > column(f, "function_words")[1]
    assert column(f, "capitalised")[1] > column(f, "capitalised")[0]
    assert column(f, "markup")[1] > 0 == column(f, "markup")[0]
    assert column(f, "boilerplate")[1] > column(f, "boilerplate")[0]
    assert column(f, "argument_markers")[0] > 0 == column(f, "argument_markers")[1]
    assert column(f, "comparative_markers")[0] > 0
    assert column(f, "all_caps")[2] > column(f, "all_caps")[0]
    assert column(f, "urls")[2] > 0 and column(f, "profanity")[2] > 0
    assert column(f, "repeated_punctuation")[2] > 0


def test_text_features_sentences_and_questions():
    f = text_features(["Is Python better than PHP? Or is it Java?", "Python is better. PHP is older."])
    assert column(f, "question_only").tolist() == [1.0, 0.0]
    assert column(f, "log_sentences").tolist() == pytest.approx([np.log(3), np.log(3)])


def test_score_is_in_unit_interval_and_follows_weights():
    weights = np.zeros(len(FEATURE_NAMES))
    weights[FEATURE_NAMES.index("function_words")] = 20.0
    scores = toy_model(weights).score([PROSE, MENU])
    assert scores.dtype == np.float32
    assert ((scores > 0) & (scores < 1)).all()
    assert scores[0] > scores[1]


def test_score_uses_given_embeddings_and_checks_their_shape():
    embedding_weights = np.zeros(EMBEDDING_DIM)
    embedding_weights[0] = 10.0
    model = toy_model(np.zeros(len(FEATURE_NAMES)), embedding_weights)
    embeddings = np.zeros((2, EMBEDDING_DIM), dtype=np.float32)
    embeddings[1, 0] = 1.0
    assert model.score(["a", "b"], embeddings=embeddings).tolist() == pytest.approx([0.5, 1 / (1 + np.exp(-10))])
    with pytest.raises(ToucheError, match="shape"):
        model.score(["a", "b"], embeddings=embeddings[:1])


def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    model = QualityModel(rng.normal(size=len(FEATURE_NAMES)), rng.uniform(1, 2, size=len(FEATURE_NAMES)),
                         rng.normal(size=len(FEATURE_NAMES)), rng.normal(size=EMBEDDING_DIM), 0.25, {"seed": 1})
    model.save(tmp_path / "quality.npz")
    loaded = QualityModel.load(tmp_path / "quality.npz")
    embeddings = rng.normal(size=(2, EMBEDDING_DIM)).astype(np.float32)
    assert loaded.info == {"seed": 1}
    np.testing.assert_allclose(loaded.score([PROSE, MENU], embeddings), model.score([PROSE, MENU], embeddings))


def test_load_missing_model_is_a_user_error(tmp_path):
    with pytest.raises(ToucheError, match="not found"):
        QualityModel.load(tmp_path / "absent.npz")


def test_head_trainer_learns_points_and_pairs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    targets = (x[:, 0] > 0).astype(float)
    w, b = training.HeadTrainer(1e-3, 1e-3, pair_weight=0.0, n_features=3).fit(x, targets, np.zeros((0, 3)))
    assert w[0] > 1 and abs(w[1]) < w[0] / 3
    # pairs alone say the second column matters; with pair loss the head learns it too
    diffs = np.column_stack([np.zeros(100), rng.uniform(0.1, 1, 100), np.zeros(100)])
    w_pairs, _ = training.HeadTrainer(1e-3, 1e-3, pair_weight=1.0, n_features=3).fit(x, targets, diffs)
    assert w_pairs[1] > 1 and w_pairs[0] > 1


def test_loaders_read_the_shared_layout(fixtures):
    data_dir = fixtures / "quality" / "data"
    judged = training.load_touche_dev(data_dir)
    assert [(j.qid, j.doc_id, j.quality, j.relevance) for j in judged] == [
        ("1", "p1", 2, 2), ("1", "p2", 0, 0), ("1", "p3", 1, 2), ("2", "p4", 0, 1), ("2", "p5", 2, 2)]
    pairs = training.load_ukp_pairs(data_dir)
    assert len(pairs.texts) == 5  # arg1 appears in two pairs but is stored once
    better = [pairs.texts[i] for i in pairs.better]
    worse = [pairs.texts[i] for i in pairs.worse]
    assert better[0] == better[1] == "Bottled water is safer because it is tested."
    assert worse[:2] == ["bottles r dumb lol", "no"]
    assert better[2].startswith("Books train")
    assert pairs.debate.tolist() == ["ban-plastic-water-bottles"] * 2 + ["tv-is-better-than-books"]


def test_judged_ndcg_and_topic_folds(fixtures):
    judged = training.load_touche_dev(fixtures / "quality" / "data")
    qids, doc_ids, grades = [j.qid for j in judged], [j.doc_id for j in judged], [j.quality for j in judged]
    perfect = np.array(grades, dtype=float)
    assert per_topic_ndcg(qids, doc_ids, grades, perfect) == {"1": pytest.approx(1.0), "2": pytest.approx(1.0)}
    assert per_topic_ndcg(qids, doc_ids, grades, -perfect)["2"] < 1.0
    assert training.mean_ndcg5(judged, perfect) == pytest.approx(1.0)
    folds = topic_folds([str(q) for q in range(1, 11)], 3, seed=7)
    assert sorted(q for fold in folds for q in fold) == sorted(str(q) for q in range(1, 11))
    assert folds == topic_folds([str(q) for q in range(1, 11)], 3, seed=7)


@pytest.mark.slow
def test_shipped_model_prefers_a_good_argument_to_spam():
    model = QualityModel.load()
    scores = model.score([GOOD_ARGUMENT, SPAM, MENU])
    assert ((scores >= 0) & (scores <= 1)).all()
    assert scores[0] > scores[1] and scores[0] > scores[2]


@pytest.mark.slow
def test_shared_training_data_is_complete(shared_data):
    judged = training.load_touche_dev(shared_data)
    assert len(judged) == 401 and len({j.qid for j in judged}) == 25
    pairs = training.load_ukp_pairs(shared_data)
    assert len(pairs.better) == 11650 and len(set(pairs.debate)) == 16


def test_a_repeated_text_is_measured_once_with_the_same_row():
    texts = ["Cats are better. Dogs bark!", "Tenure protects teachers?", "Cats are better. Dogs bark!"]
    features = text_features(texts)
    assert np.array_equal(features, np.stack([text_features([text])[0] for text in texts]))


def test_texts_are_measured_in_batches_with_the_rows_of_all_at_once(monkeypatch):
    """A batch's word lists at a time: 100,000 pages counted at once took gigabytes."""
    import app.quality as quality

    texts = [f"Text {i}: " + "word " * (i % 7) + "Is it? Yes!" * (i % 3) for i in range(25)]
    whole = text_features(texts)
    monkeypatch.setattr(quality, "FEATURE_BATCH", 4)
    np.testing.assert_array_equal(text_features(texts), whole)


def test_sentences_are_counted_by_runs_of_end_marks_as_before_in_linear_time():
    """The count once backtracked through each run of end marks from every position: 2.3 s for "!" x 19,900 + "a"."""
    rng = np.random.default_rng(13)
    column = FEATURE_NAMES.index("log_sentences")
    for _ in range(300):
        text = "".join(rng.choice(list(".!?a \n"), rng.integers(0, 30)))
        runs = [run for run in re.finditer(r"[.!?]+", text)
                if run.end() == len(text) or text[run.end()].isspace()]
        assert text_features([text])[0, column] == pytest.approx(np.log1p(len(runs)))
    assert text_features(["Tea is better. " + "!" * 19_900 + "a"])[0, column] == pytest.approx(np.log1p(1))


def test_a_model_saved_onto_a_full_disk_leaves_the_old_one_whole(tmp_path, monkeypatch):
    """Trainers wrote in place: a full disk left a cut model where the shipped one was, and every run failed on it."""
    import errno

    head, path = QualityModel.load(), tmp_path / "quality.npz"
    head.save(path)
    before = path.read_bytes()

    def full(out, **arrays):
        out.write(b"PK\x03\x04 half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", full)
    with pytest.raises(OSError, match="No space left"):
        head.save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["quality.npz"]


def test_a_head_of_non_finite_or_no_weights_is_not_saved_over_the_old_one(tmp_path):
    """Trained on no judged passage (empty dev qrels), the relevance head's scaling was NaN and the quality head's
    weights all 0: saved over the shipped heads with exit 0, every later run scored NaN."""
    head, path = QualityModel.load(), tmp_path / "quality.npz"
    head.save(path)
    before = path.read_bytes()
    for broken in (QualityModel(np.full_like(head.feature_mean, np.nan), head.feature_scale, head.feature_weights,
                                head.embedding_weights, head.bias),
                   QualityModel(head.feature_mean, head.feature_scale, np.zeros_like(head.feature_weights),
                                np.zeros_like(head.embedding_weights), 0.0)):
        with pytest.raises(ToucheError, match=r"(non-finite|no) weights .*quality.npz not written"):
            broken.save(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("qrels", ["", "1001 0 p1 2\n1002 0 p4 1\n"])
def test_dev_qrels_judging_no_dev_topic_are_an_error_before_the_training(fixtures, tmp_path, qrels):
    """Empty, or of other topics: the relevance and quality heads were trained on nothing, exit 0."""
    import shutil

    from app.training.common import read_dev_qrels

    shutil.copytree(fixtures / "quality" / "data", tmp_path / "data")
    (tmp_path / "data" / "touche-2022-task2" / "touche-task2-2022-quality-dev.qrels").write_text(qrels)
    with pytest.raises(ToucheError, match=r"quality-dev.qrels judges none of the dev topics \(1, 2\): empty, or"):
        read_dev_qrels(tmp_path / "data", "quality")
    with pytest.raises(ToucheError, match="judges none of the dev topics"):
        training.load_touche_dev(tmp_path / "data")


def test_an_empty_ukpconvarg1_file_is_an_error(fixtures, tmp_path):
    """A 0-byte or empty gzip file was read as no rows: one debate side fewer, unsaid."""
    import gzip
    import shutil

    shutil.copytree(fixtures / "quality" / "data", tmp_path / "data")
    folder = tmp_path / "data" / "argument-quality" / "ukpconvarg1" / "UKPConvArg1Strict-CSV"
    (folder / "tv-is-better-than-books_books.csv.gz").write_bytes(gzip.compress(b""))
    with pytest.raises(ToucheError, match=r"tv-is-better-than-books_books.csv.gz: no argument pair \(is the file cut"):
        training.load_ukp_pairs(tmp_path / "data")
