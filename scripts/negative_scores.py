"""Negative first-stage scores (log-probabilities, negated distances) and the lexical feature, measured.

    python scripts/negative_scores.py     # about 4 min on 2 cores: judged-only nDCG@5 on the 2022 dev topics

The 2022 dev topics' BM25 candidates (tira-input) are reranked with their scores as BM25 gives them, shifted to all
negative (s - max - 1, as log-probabilities are) and made affine to all negative (s / max * 10 - 20); each read by
`fusion.lexical_feature` (negative lists mapped onto [0, 1] by the reranked scores) and as it read them before
(divided by the largest absolute score, sign kept: in [-1, -0.77]). Measured: BM25 0.7686 / 0.7254 (relevance /
quality); both negative forms 0.7686 / 0.7254 as read now (also when shifted by every candidate's lowest score, the
reading of 2026-11-28), 0.7694 / 0.7206 as read before.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    import ir_measures

    from app import fusion
    from app.evaluate import read_qrels
    from app.fusion import rank
    from app.rerank import score_candidates
    from app.retrieval import first_stage
    from app.runfile import ranked_rows
    from app.settings import RunSettings
    from app.training.common import DEFAULT_DATA_DIR, TASK, read_dev_topics

    measure = ir_measures.nDCG(judged_only=True) @ 5
    topics = read_dev_topics(DEFAULT_DATA_DIR)
    numbers = {topic.number for topic in topics}
    qrels = {name: [qrel for qrel in read_qrels(DEFAULT_DATA_DIR / TASK / f"touche-task2-2022-{name}-dev.qrels")
                    if qrel.query_id in numbers] for name in ("relevance", "quality")}
    settings = RunSettings(input_dir=DEFAULT_DATA_DIR / TASK / "tira-input", output_dir=Path("/nonexistent"),
                           progress=False, backend="local", cache_dir=Path("out/negative-scores/cache"))
    candidates, _, cache, _ = first_stage(settings, topics)
    now = fusion.lexical_feature

    def before(scores, head=None):
        scores = np.asarray(scores, dtype=np.float64)
        top = np.abs(scores).max() if len(scores) else 0.0
        return scores / top if top > 0 else scores

    forms = {"bm25": lambda s: s, "s - max - 1": lambda s: s - s.max() - 1,
             "s / max * 10 - 20": lambda s: s / s.max() * 10 - 20}
    for form, change in forms.items():
        moved = {qid: [replace(c, score=float(v)) for c, v in zip(found, change(np.array([c.score for c in found])))]
                 for qid, found in candidates.items()}
        for reading, feature in (("now", now), ("before", before)):
            fusion.lexical_feature = feature
            scored = score_candidates(topics, moved, settings, cache).scored
            run = [ir_measures.ScoredDoc(line.qid, line.doc_id, line.score) for qid, topic in scored.items()
                   for line in ranked_rows(qid, *rank(moved[qid], fusion.fuse(topic.features), settings.depth),
                                           None, "negative", settings.depth)]
            row = {name: round(ir_measures.calc_aggregate([measure], judged, run)[measure], 4)
                   for name, judged in qrels.items()}
            print(json.dumps({"scores": form, "read": reading, **row}), flush=True)
    fusion.lexical_feature = now


if __name__ == "__main__":
    main()
