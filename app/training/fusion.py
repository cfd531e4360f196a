"""Tune the fusion weights on the Touché 2022 Task 2 dev topics, with leave-one-topic-out cross-validation.

    python -m app.training.fusion [--data ../shared/data] [--cache /tmp/fusion-cache]

Computes every candidate's features once with the real pipeline stages (cached), then grid-searches the
weights (dense fixed at 1: only ratios matter) for judged-only relevance nDCG@5. Prints the weights that are
best on all 25 topics, the leave-one-topic-out estimate (weights chosen on 24 topics, scored on the 25th),
and relevance and quality nDCG@5 of the baselines. Put the printed weights into app/fusion.py.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import pickle
import statistics
from pathlib import Path

import ir_measures
import numpy as np

from .. import fusion
from ..evaluate import read_qrels
from ..pipeline import RunSettings, _Timer, first_stage, score_features
from ..topics import read_topics

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
MEASURE = ir_measures.nDCG(judged_only=True) @ 5
GRID = {
    "lexical": [0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5],
    "length": [0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0],
    "quality": [0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0],
}


def dev_features(data: Path, cache: Path) -> tuple[dict, dict]:
    """Candidates and features of every dev topic, computed once by the pipeline's own stages."""
    path = cache / "features.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    task = data / "touche-2022-task2"
    dev = set(task.joinpath("dev-topics.txt").read_text().replace(",", " ").split())
    settings = RunSettings(input_dir=task / "tira-input", output_dir=cache, device="cpu")
    topics = [topic for topic in read_topics(settings.input_dir) if topic.number in dev]
    candidates, _ = first_stage(settings, topics, _Timer())
    features = score_features(topics, candidates, settings)
    ids = {qid: [candidate.doc.doc_id for candidate in found] for qid, found in candidates.items()}
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps((ids, features)))
    return ids, features


def per_topic_ndcg(ids: dict, features: dict, weights: fusion.FusionWeights, qrels: list) -> dict[str, float]:
    run = [ir_measures.ScoredDoc(qid, doc_id, float(score))
           for qid in ids for doc_id, score in zip(ids[qid], fusion.fuse(features[qid], weights))]
    return {m.query_id: m.value for m in MEASURE.iter_calc(qrels, run)}


def main(data: Path = DATA, cache: Path = Path("/tmp/fusion-cache")) -> None:
    task = data / "touche-2022-task2"
    relevance = read_qrels(task / "touche-task2-2022-relevance-dev.qrels")
    quality = read_qrels(task / "touche-task2-2022-quality-dev.qrels")
    ids, features = dev_features(data, cache)
    names = [name for name in GRID if name in next(iter(features.values()))]
    combos = [dict(zip(names, values)) for values in itertools.product(*(GRID[name] for name in names))]
    table = {}
    for combo in combos:
        weights = fusion.FusionWeights(dense=1.0, **{"lexical": 0.0, "length": 0.0, **combo})
        table[tuple(combo.items())] = per_topic_ndcg(ids, features, weights, relevance)
    topics = sorted(ids)

    def mean(key, subset):
        return statistics.fmean(table[key].get(qid, 0.0) for qid in subset)

    best = max(table, key=lambda key: mean(key, topics))
    held_out = []
    for qid in topics:
        rest = [other for other in topics if other != qid]
        chosen = max(table, key=lambda key: mean(key, rest))
        held_out.append(table[chosen].get(qid, 0.0))
    best_weights = fusion.FusionWeights(dense=1.0, **{"lexical": 0.0, "length": 0.0, **dict(best)})
    for label, weights in (("BM25 alone", fusion.FusionWeights(lexical=1.0, dense=0.0, length=0.0)),
                           ("dense alone", fusion.FusionWeights(lexical=0.0, dense=1.0, length=0.0)),
                           ("best fusion", best_weights)):
        rel = statistics.fmean(per_topic_ndcg(ids, features, weights, relevance).values())
        qual = statistics.fmean(per_topic_ndcg(ids, features, weights, quality).values())
        print(f"{label:12s} {weights}: relevance nDCG@5 {rel:.4f}  quality nDCG@5 {qual:.4f} (judged-only)")
    print(f"leave-one-topic-out relevance nDCG@5 (judged-only): {statistics.fmean(held_out):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/fusion-cache"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    main(args.data, args.cache)
