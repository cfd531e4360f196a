"""Train the relevance head shipped as app/models/relevance.npz.

    python -m app.training.relevance [DATA_DIR] [--out-dir app/models] [--seed 13] [--cache-dir DIR]

Supervision: the relevance qrels (0/1/2) of the Touché 2022 Task 2 dev topics' judged passages whose text is in
tira-input/passages.jsonl.gz (401 passages, 25 topics). Loss: mean cross-entropy of sigmoid(score) against
grade / 2, plus the RankNet loss of every within-topic pair with different grades (weight PAIR_WEIGHT), plus L2.

Honest estimate first: topics are held out in k folds, and each fold's L2 penalties are chosen by an inner
topic-held-out CV over its training topics only. The shipped head then gets the penalties chosen the same way on
all topics and is fit on all of them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app import encoder
from app.fusion import training_words
from app.lexical import LexicalIndex
from app.records import Topic
from app.relevance import DEFAULT_MODEL_PATH, FEATURE_NAMES, RelevanceModel, relevance_features, topic_queries
from app.training import common
from app.training import quality as quality_training
from app.training.quality import HeadTrainer

log = logging.getLogger(__name__)
# What this module reads under the data folder (docs/DATA.md); checked before training.
DATA_FILES = (*common.DEV_PASSAGES, *common.DEV_TOPICS, *common.DEV_QRELS)
OUTPUTS = (DEFAULT_MODEL_PATH.name,)  # what it writes into --out, checked before the training

CANDIDATES = 1000
L2_FEATURES_GRID = (0.01, 0.1, 1.0)
L2_EMBEDDING_GRID = (0.003, 0.03, 0.3)
# Fixed before the final CV: 1.0 beat pointwise-only (0.0) on the outer folds (0.797 vs 0.770 relevance nDCG@5).
PAIR_WEIGHT = 1.0


@dataclass
class DevData:
    """The dev topics over tira-input: passages, BM25 candidates, MiniLM vectors and the judged labels."""

    topics: list[Topic]
    doc_ids: list[str]
    texts: list[str]
    vectors: np.ndarray
    query_vectors: np.ndarray  # (topics, 4, 384): topic_queries of each topic
    hits: list[tuple[np.ndarray, np.ndarray]]  # per topic: passage rows and BM25 scores, best first
    relevance: dict[tuple[str, str], int]
    quality: dict[tuple[str, str], int]

    @classmethod
    def load(cls, data_dir: Path, cache_dir: Path | None = None) -> "DevData":
        passages = common.read_passages(data_dir)
        topics = common.read_dev_topics(data_dir)
        texts = list(passages.values())
        hits = LexicalIndex.build(texts).search([t.title for t in topics], CANDIDATES)
        vectors = quality_training.embed(texts, cache_dir)
        queries = encoder.encode([query for topic in topics for query in topic_queries(topic)],
                                 **common.ENCODING)
        return cls(topics, list(passages), texts, vectors, queries.reshape(len(topics), -1, queries.shape[1]), hits,
                   common.read_dev_qrels(data_dir, "relevance"), common.read_dev_qrels(data_dir, "quality"))

    def candidate_features(self, t: int, rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """relevance_features of topic t's candidates `rows` (BM25 `scores` of all its candidates)."""
        lexical = scores[: len(rows)] / max(np.abs(scores).max(initial=0.0), 1e-9)
        words = np.array([training_words(self.texts[r]) for r in rows])
        return relevance_features(self.vectors[rows], self.query_vectors[t], lexical, words)


@dataclass
class Judged:
    """Design rows of the judged passages that are in the corpus: features, embeddings, grades, topics."""

    features: np.ndarray
    embeddings: np.ndarray
    grades: np.ndarray
    qids: np.ndarray
    doc_ids: list[str]

    @classmethod
    def build(cls, dev: DevData) -> "Judged":
        features, rows, grades, qids = [], [], [], []
        for t, (topic, (hit_rows, scores)) in enumerate(zip(dev.topics, dev.hits)):
            judged = np.array([r for r, doc_id in enumerate(dev.doc_ids) if (topic.number, doc_id) in dev.relevance],
                              dtype=np.int64)
            # a judged passage BM25 did not retrieve gets lexical 0
            bm25 = dict(zip(hit_rows.tolist(), scores.tolist()))
            lexical = np.array([bm25.get(r, 0.0) for r in judged]) / max(np.abs(scores).max(initial=0.0), 1e-9)
            words = np.array([training_words(dev.texts[r]) for r in judged])
            features.append(relevance_features(dev.vectors[judged], dev.query_vectors[t], lexical, words))
            rows.extend(judged)
            grades.extend(dev.relevance[topic.number, dev.doc_ids[r]] for r in judged)
            qids.extend([topic.number] * len(judged))
        rows = np.array(rows, dtype=np.int64)
        return cls(np.vstack(features).astype(np.float64), dev.vectors[rows].astype(np.float64),
                   np.array(grades, dtype=np.float64), np.array(qids), [dev.doc_ids[r] for r in rows])


def within_topic_pairs(grades: np.ndarray, qids: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(better, worse) index pairs among `rows` of the same topic with different grades."""
    pairs = []
    for qid in np.unique(qids[rows]):
        members = rows[qids[rows] == qid]
        better, worse = np.meshgrid(members, members, indexing="ij")
        keep = grades[better] > grades[worse]
        pairs.append(np.stack([better[keep], worse[keep]], axis=1))
    return np.vstack(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)


def fit(judged: Judged, rows: np.ndarray, l2_features: float, l2_embedding: float,
        pair_weight: float = PAIR_WEIGHT, info: dict | None = None) -> RelevanceModel:
    """A head fit on `rows` (standardisation from those rows too)."""
    mean, scale = judged.features[rows].mean(0), judged.features[rows].std(0)
    scale[scale < 1e-6] = 1.0
    model = RelevanceModel(mean, scale, np.zeros(len(FEATURE_NAMES)), np.zeros(judged.embeddings.shape[1]), 0.0)
    design = np.hstack([model.standardise(judged.features.astype(np.float32)), judged.embeddings])
    pairs = within_topic_pairs(judged.grades, judged.qids, rows)
    trainer = HeadTrainer(l2_features, l2_embedding, pair_weight, n_features=len(FEATURE_NAMES))
    w, b = trainer.fit(design[rows], judged.grades[rows] / 2.0, design[pairs[:, 0]] - design[pairs[:, 1]])
    return RelevanceModel(mean, scale, w[: len(FEATURE_NAMES)], w[len(FEATURE_NAMES):], b, info)


def predict(model: RelevanceModel, judged: Judged, rows: np.ndarray) -> np.ndarray:
    return model.logits(judged.features[rows].astype(np.float32), judged.embeddings[rows].astype(np.float32))


def mean_ndcg5(judged: Judged, scores: np.ndarray, rows: np.ndarray) -> float:
    """Mean judged-only relevance nDCG@5 over the topics of `rows`, ranking by `scores` (aligned with rows)."""
    return common.mean_ndcg(judged.qids[rows].tolist(), [judged.doc_ids[r] for r in rows], judged.grades[rows],
                            scores)


def select_l2(judged: Judged, topics: list[str], seed: int, folds: int = 4) -> tuple[float, float]:
    """The L2 penalties with the best inner topic-held-out relevance nDCG@5 over `topics` only."""
    inner = common.topic_folds(topics, folds, seed)
    rows = np.flatnonzero(np.isin(judged.qids, topics))
    results = {}
    for l2_features in L2_FEATURES_GRID:
        for l2_embedding in L2_EMBEDDING_GRID:
            scores = np.zeros(len(judged.grades))
            for fold in inner:
                test = rows[np.isin(judged.qids[rows], list(fold))]
                train = rows[~np.isin(judged.qids[rows], list(fold))]
                scores[test] = predict(fit(judged, train, l2_features, l2_embedding), judged, test)
            results[l2_features, l2_embedding] = mean_ndcg5(judged, scores[rows], rows)
    return max(results, key=results.get)


def train_without(judged: Judged, held_out: set[str], seed: int) -> RelevanceModel:
    """A head that never saw the `held_out` topics: penalties by inner CV on the rest, then fit on the rest."""
    topics = sorted(set(judged.qids) - set(held_out), key=int)
    l2 = select_l2(judged, topics, seed)
    return fit(judged, np.flatnonzero(np.isin(judged.qids, topics)), *l2)


def main(data_dir: Path = common.DEFAULT_DATA_DIR, out_dir: Path = DEFAULT_MODEL_PATH.parent, seed: int = 13,
         cache_dir: Path | None = None, folds: int = 5) -> RelevanceModel:
    """Nested topic-held-out CV, then fit on all dev topics and write out_dir/relevance.npz; return the model."""
    judged = Judged.build(DevData.load(Path(data_dir), cache_dir))
    topics = sorted(set(judged.qids), key=int)
    log.info("%d judged passages over %d topics", len(judged.grades), len(topics))
    scores = np.zeros(len(judged.grades))
    for fold in common.topic_folds(topics, folds, seed):
        test = np.flatnonzero(np.isin(judged.qids, list(fold)))
        scores[test] = predict(train_without(judged, fold, seed), judged, test)
    everything = np.arange(len(judged.grades))
    l2_features, l2_embedding = select_l2(judged, topics, seed)
    report = {"seed": seed, "folds": folds, "l2_features": l2_features, "l2_embedding": l2_embedding,
              "pair_weight": PAIR_WEIGHT,
              "touche_relevance_ndcg5_judged_cv": mean_ndcg5(judged, scores, everything),
              "touche_relevance_ndcg5_judged_dense_title": mean_ndcg5(judged, judged.features[:, 0], everything)}
    for key, value in report.items():  # what it measured, on stderr as the other trainers say it: stdout is data
        log.info("%s\t%s", key, value)
    model = fit(judged, everything, l2_features, l2_embedding, info=report)
    model.save(Path(out_dir) / DEFAULT_MODEL_PATH.name)
    log.info("wrote %s", Path(out_dir) / DEFAULT_MODEL_PATH.name)
    return model


def cli(argv: list[str] | None = None) -> None:
    parser = common.parser(__doc__, cache_example="/tmp/relevance-cache")
    parser.add_argument("--folds", type=int, default=5, help="topic folds for cross-validation")
    common.run(main, parser, argv)


if __name__ == "__main__":
    cli()
