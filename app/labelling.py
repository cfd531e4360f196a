"""The stance stage: a label for each document a topic ranks, read by the stance model (`app.stance`) from its best
passage, the stance its corpus states and its debate (`app.debates`); and --balance-stance's reordering."""

from __future__ import annotations

import logging

import numpy as np
from tqdm import tqdm

from . import debates, stance
from .fusion import Ranking
from .records import Candidate, Topic
from .rerank import Encoded
from .settings import STANCE_DEPTH, RunSettings

log = logging.getLogger(__name__)


def detect_stances(topics: list[Topic], ranked: dict[str, Ranking],
                   read_passages: dict[str, dict[str, list[int]]], encoded: Encoded, queries: dict[str, np.ndarray],
                   task: str, settings: RunSettings,
                   candidates: dict[str, list[Candidate]] | None = None) -> dict[str, list[str]]:
    """Stance labels for each topic's reranked documents, each read by its best passages (`read_passages`: per
    topic, document id -> rows of `encoded`, best first; on controversial topics the best alone, on comparative ones
    all together: `StanceModel.predict`'s `windows`) and by the stance its corpus states, if any (`candidates`'
    documents). Below the rerank depth only a stated stance or a debate's turns give a label (on controversial
    topics); Q0 (no label) for the rest, and everywhere with --no-stance. On controversial topics an args.me
    argument that states no stance is read without the title its debate's arguments among the topic's candidates
    share, and hears the other posts read of its debate where its id numbers them (`app.debates`), which also label
    such a post below the rerank depth."""
    if not settings.stance:
        return {}
    model = stance.StanceModel.load(device=settings.device, precision=settings.precision)
    cross_depth = settings.stance_depth if settings.stance_model == "cross" else 0
    labels = {}
    for topic in tqdm(topics, desc="stance", unit="topic", disable=not settings.progress):  # minutes on args.me
        if topic.number not in ranked:
            continue
        doc_ids, _ = ranked[topic.number]
        read = read_passages[topic.number]
        head = reranked_head(doc_ids, read, settings.rerank_depth)
        passages = [read[doc_id][0] for doc_id in head]
        documents = {candidate.doc.doc_id: candidate.doc for candidate in (candidates or {}).get(topic.number, ())}
        reading = debates.stance_reading(doc_ids, head, [encoded.texts[row] for row in passages], documents,
                                         controversial=task == "controversial")
        if task == "comparative":  # a long document's best passages together: reading.texts are the passages
            rows = [row for doc_id in head for row in read[doc_id]]
            predictions = model.predict(topic, [encoded.texts[row] for row in rows], encoded.vectors[rows], task,
                                        query_embeddings=queries[topic.number],
                                        windows=[len(read[doc_id]) for doc_id in head])
        else:
            predictions = model.predict(topic, reading.texts, encoded.vectors[passages],
                                        task, query_embeddings=queries[topic.number], cross_depth=cross_depth,
                                        stated=reading.stated, unread=[statement for _, statement in reading.unread],
                                        turns=reading.turns,
                                        unread_turns=[position for _, position in reading.unread_turns])
        labels[topic.number] = reading.labels(doc_ids, predictions)
    return labels


def warn_moot_stance_depth(settings: RunSettings, task: str) -> None:
    """Say where the topics' task leaves --stance-depth without effect (what the other options leave without
    effect, the CLI says before the run)."""
    if settings.stance and settings.stance_model == "cross" and settings.stance_depth != STANCE_DEPTH:
        if task == "comparative":  # the heads read comparative stance, measured better there
            log.warning("comparative topics: their stance is read by the heads alone, so --stance-depth %d is "
                        "ignored", settings.stance_depth)
        elif settings.stance_depth > settings.rerank_depth:  # stance reads the reranked documents
            log.warning("--stance-depth %d: the stance cross-encoder reads the reranked documents, the top "
                        "--rerank-depth %d", settings.stance_depth, settings.rerank_depth)


def reranked_head(doc_ids: list[str], read_passages: dict[str, list[int]], rerank_depth: int) -> list[str]:
    """A topic's reranked documents in ranking order: the fused ranking keeps them above the first stage's tail."""
    return [doc_id for doc_id in doc_ids[:rerank_depth] if doc_id in read_passages]


def balance(ranked: dict[str, Ranking], stances: dict[str, list[str]],
            argumentative: set[str]) -> tuple[dict[str, Ranking], dict[str, list[str]]]:
    """--balance-stance: alternate pro and con near the top of argumentative topics; scores stay decreasing."""
    balanced_ranked, balanced_stances = dict(ranked), dict(stances)
    for qid in argumentative & set(stances):
        (doc_ids, scores), labels = ranked[qid], stances[qid]
        order = stance.balance_stance(labels)
        balanced_ranked[qid] = Ranking([doc_ids[i] for i in order], scores)
        balanced_stances[qid] = [labels[i] for i in order]
    return balanced_ranked, balanced_stances
