"""Tune the fusion weights (lexical, dense, length prior, quality, relevance) by topic-held-out cross-validation.

    python -m app.training.fusion [DATA_DIR] [--seed 13] [--folds 5] [--cache-dir DIR]

Replays the pipeline's scoring on the Touché 2022 Task 2 dev topics over tira-input/passages.jsonl.gz: BM25 over
the passages (topic titles as queries), then for each topic's top `rerank_depth` candidates MiniLM cosine, the
length prior, the quality head and the relevance head; the tail gets the head's minimum of each. The quality and
relevance scores of a fold's topics come from heads trained without those topics (the quality head with the
shipped hyperparameters, the relevance head with its own nested choice), so no score has seen its test topic.

For every weight combination of a grid it computes per-topic judged-only nDCG@5 against the relevance and the
quality qrels; each fold picks the combination with the best mean of the two on the other folds' topics and is
scored on its own. Weights are chosen with the qrels restricted to the judged passages in tira-input (about 40%
of them: the best possible ranking scores 1.0); both that and the scoring against all dev qrels are printed, per
fold and mean, before (no relevance head) and after (with it). Adapted from the quality engineer's tuner.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app import fusion
from app.fusion import WEIGHTS, FusionWeights, length_prior, lexical_feature, training_words
from app.quality import FEATURE_NAMES as QUALITY_FEATURES
from app.quality import QualityModel
from app.settings import RunSettings
from app.training import common
from app.training.common import ideal_dcg, judged_ndcg
from app.training import quality as quality_training
from app.training import relevance as relevance_training

log = logging.getLogger(__name__)
# What this module reads under the data folder (docs/DATA.md): the quality and relevance heads' data.
DATA_FILES = tuple(dict.fromkeys(quality_training.DATA_FILES + relevance_training.DATA_FILES))

GRID = {
    "lexical": (0.0, 0.1, 0.3),
    "dense": (0.0, 1.0),
    "length": (0.0, 0.1, 0.3, 0.5),
    "quality": (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0),
    "relevance": (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0),
}
RERANK_DEPTH = RunSettings.rerank_depth


@dataclass
class TopicFeatures:
    """One topic's BM25 candidates (best first) and their fusion features."""

    qid: str
    doc_ids: list[str]
    features: dict[str, np.ndarray]


def fold_splits(qids: list[str], folds: list[set[str]]) -> list[tuple[list[str], list[str]]]:
    """(training topics, held-out topics) per fold: every topic is held out once and never trains its own fold."""
    return [([q for q in qids if q not in fold], [q for q in qids if q in fold]) for fold in folds]


def fold_quality_models(data_dir: Path, folds: list[set[str]], cache_dir: Path | None) -> dict[str, QualityModel]:
    """For each dev topic, a quality head trained without its fold (hyperparameters of the shipped head)."""
    data = quality_training.TrainingData.build(quality_training.load_touche_dev(data_dir),
                                               quality_training.load_ukp_pairs(data_dir), cache_dir)
    shipped = QualityModel.load()
    trainer = quality_training.HeadTrainer(shipped.info["l2_features"], shipped.info["l2_embedding"],
                                           shipped.info["pair_weight"])
    qids = np.array([j.qid for j in data.touche])
    diffs, targets = data.pair_diffs(), data.targets()
    models = {}
    for fold in folds:
        train = ~np.isin(qids, list(fold))
        w, b = trainer.fit(data.touche_x[train], targets[train], diffs)
        model = QualityModel(data.mean, data.scale, w[: len(QUALITY_FEATURES)], w[len(QUALITY_FEATURES):], b)
        models.update({qid: model for qid in fold})
    return models


def build_features(data_dir: Path, seed: int, folds: list[set[str]], cache_dir: Path | None,
                   rerank_depth: int = RERANK_DEPTH) -> list[TopicFeatures]:
    """Pipeline features of every dev topic's candidates; quality and relevance from heads that never saw it."""
    dev = relevance_training.DevData.load(data_dir, cache_dir)
    quality_models = fold_quality_models(data_dir, folds, cache_dir)
    judged = relevance_training.Judged.build(dev)
    relevance_models = {}
    for fold in folds:
        model = relevance_training.train_without(judged, fold, seed)
        relevance_models.update({qid: model for qid in fold})
        log.info("relevance head without topics %s trained", sorted(fold, key=int))

    words = np.array([training_words(text) for text in dev.texts])
    result = []
    for t, (topic, (rows, scores)) in enumerate(zip(dev.topics, dev.hits)):
        head = rows[:rerank_depth]
        lexical = scores.astype(np.float64)
        relevance_model = relevance_models[topic.number]
        head_features = dev.candidate_features(t, head, lexical)
        features = fusion.features(lexical_feature(lexical, len(head)), {
            "dense": dev.vectors[head] @ dev.query_vectors[t, 0],
            "length": length_prior(words[head]),
            "quality": quality_models[topic.number].score([dev.texts[r] for r in head], dev.vectors[head]),
            "relevance": relevance_model.squash(relevance_model.logits(head_features, dev.vectors[head])),
        }, fusion.first_copies([dev.texts[r] for r in head]))
        result.append(TopicFeatures(topic.number, [dev.doc_ids[r] for r in rows], features))
    return result


class GridEvaluation:
    """Per-topic judged-only nDCG@5 (relevance, quality; restricted and all qrels) of weight combinations."""

    MEASURES = ("relevance", "quality", "relevance_all", "quality_all")

    def __init__(self, topics: list[TopicFeatures], relevance: dict[tuple[str, str], int],
                 quality: dict[tuple[str, str], int]):
        self.topics = topics
        self.qids = [t.qid for t in topics]
        self.judged, self.gains, self.ideal = [], [], []
        for topic in topics:
            judged = np.array([(topic.qid, d) in relevance for d in topic.doc_ids], dtype=bool)
            docs = [d for d, j in zip(topic.doc_ids, judged) if j]
            gains = {"relevance": np.array([relevance[topic.qid, d] for d in docs], dtype=np.float64),
                     "quality": np.array([quality.get((topic.qid, d), 0) for d in docs], dtype=np.float64)}
            # restricted: the ideal ranking of the judged passages in the corpus; all: of every judged passage
            everything = {name: [v for (q, _), v in labels.items() if q == topic.qid]
                          for name, labels in (("relevance", relevance), ("quality", quality))}
            self.judged.append(judged)
            self.gains.append(gains)
            self.ideal.append({"relevance": ideal_dcg(gains["relevance"]), "quality": ideal_dcg(gains["quality"]),
                               "relevance_all": ideal_dcg(everything["relevance"]),
                               "quality_all": ideal_dcg(everything["quality"])})

    def evaluate(self, combos: list[FusionWeights]) -> dict[str, np.ndarray]:
        """Per measure, an array (combos x topics) of judged-only nDCG@5."""
        names = list(GRID)
        weights = np.array([[getattr(w, name) for name in names] for w in combos], dtype=np.float64)
        out = {m: np.zeros((len(combos), len(self.topics))) for m in self.MEASURES}
        for i, (topic, judged) in enumerate(zip(self.topics, self.judged)):
            features = np.stack([np.asarray(topic.features[name], dtype=np.float64)[judged] for name in names])
            # ties (e.g. the padded tail, or all weights 0) keep BM25 order
            scores = weights @ features - 1e-9 * np.flatnonzero(judged)[None, :]
            for m in self.MEASURES:
                label = m.removesuffix("_all")
                out[m][:, i] = judged_ndcg(scores, self.gains[i][label], self.ideal[i][m])
        return out


def grid(with_quality: bool = True, with_relevance: bool = True) -> list[FusionWeights]:
    values = dict(GRID, quality=GRID["quality"] if with_quality else (0.0,),
                  relevance=GRID["relevance"] if with_relevance else (0.0,))
    return [FusionWeights(**dict(zip(values, combo))) for combo in itertools.product(*values.values())
            if any(combo)]


def cross_validate(evaluation: GridEvaluation, combos: list[FusionWeights], folds: list[set[str]],
                   name: str) -> dict[str, float]:
    """Per fold, the combination best on its training topics (mean of restricted relevance and quality), scored
    on its held-out topics; prints each fold and the means over all topics."""
    results = evaluation.evaluate(combos)
    objective = (results["relevance"] + results["quality"]) / 2
    columns = {q: i for i, q in enumerate(evaluation.qids)}
    held_out = {m: np.zeros(len(columns)) for m in results}
    for i, (train, test) in enumerate(fold_splits(evaluation.qids, folds)):
        best = int(np.argmax(objective[:, [columns[q] for q in train]].mean(axis=1)))
        test_columns = [columns[q] for q in test]
        for m in results:
            held_out[m][test_columns] = results[m][best, test_columns]
        print(f"{name}\tfold {i}\t" + "\t".join(f"{m} {results[m][best, test_columns].mean():.4f}"
                                                 for m in results) + f"\t{combos[best]}")
    means = {m: float(values.mean()) for m, values in held_out.items()}
    print(f"{name}\tmean\t" + "\t".join(f"{m} {value:.4f}" for m, value in means.items()))
    return means


def main(data_dir: Path = common.DEFAULT_DATA_DIR, seed: int = 13, folds: int = 5, cache_dir: Path | None = None,
         rerank_depth: int = RERANK_DEPTH) -> FusionWeights:
    """Print the cross-validated comparison and return the weights best on all dev topics.

    Measures: `relevance`/`quality` are judged-only nDCG@5 with the qrels restricted to passages in tira-input;
    `relevance_all`/`quality_all` with all dev qrels (unreachable passages count in the ideal ranking).
    """
    data_dir = Path(data_dir)
    split = common.topic_folds(common.dev_topic_numbers(data_dir), folds, seed)
    topics = build_features(data_dir, seed, split, cache_dir, rerank_depth)
    evaluation = GridEvaluation(topics, common.read_dev_qrels(data_dir, "relevance"),
                                common.read_dev_qrels(data_dir, "quality"))

    fixed = {"bm25 only": FusionWeights(1.0, 0.0, 0.0), "minilm rerank": FusionWeights(0.0, 1.0, 0.0),
             "shipped weights": WEIGHTS}
    results = evaluation.evaluate(list(fixed.values()))
    for i, (name, weights) in enumerate(fixed.items()):
        print(f"{name}\tall topics\t" + "\t".join(f"{m} {results[m][i].mean():.4f}" for m in results)
              + f"\t{weights}")
    cross_validate(evaluation, grid(with_quality=False, with_relevance=False), split, "no quality, no relevance")
    cross_validate(evaluation, grid(with_relevance=False), split, "before (quality)")
    cross_validate(evaluation, grid(), split, "after (quality + relevance)")
    combos = grid()
    results = evaluation.evaluate(combos)
    best = int(np.argmax(((results["relevance"] + results["quality"]) / 2).mean(axis=1)))
    print("best on all dev topics\t" + "\t".join(f"{m} {results[m][best].mean():.4f}" for m in results)
          + f"\t{combos[best]}")
    return combos[best]


def cli(argv: list[str] | None = None) -> None:
    parser = common.parser(__doc__, out_dir=False, cache_example="/tmp/relevance-cache")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--rerank-depth", type=int, default=RERANK_DEPTH)
    common.run(main, parser, argv)


if __name__ == "__main__":
    cli()
