"""The story of a run: topics -> candidates -> passages -> scores -> stance -> run file.

Each step calls one stage module with plain records in and out; `run` reads top to bottom.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import debates, fusion, runfile, stance
from .files import run_scratch
from .logs import StageTimer
from .questions import QuestionAnalysis, load_classifier
from .records import COMPARATIVE_LABELS, CONTROVERSIAL_LABELS, Candidate, Topic
from .rerank import Encoded, score_candidates
from .retrieval import candidate_source, first_stage
from .settings import STANCE_DEPTH, RunSettings
from .topics import parse_objects, read_topics

log = logging.getLogger(__name__)

DEMO_INPUT = Path(__file__).parent / "demo"


@dataclass
class RunReport:
    """What a run did: where the run is, how big it is (`topics`: those it holds; `documents`: as `FirstStage`
    counts them; `passages`: the distinct passages reranked, a cached one's too), and seconds per stage."""

    run_path: Path
    topics: int
    rows: int
    documents: int
    stages: dict[str, float] = field(default_factory=dict)
    passages: int = 0
    origin: str = ""  # where the candidates came from (`FirstStage.origin`)


def run(settings: RunSettings) -> RunReport:
    """Write the run of `settings.input_dir`'s topics to `settings.output_dir`/run.txt and say what it took."""
    if settings.cache_dir is None:
        # No cache directory: caches live for this run only, and never in the output, which TIRA keeps whole.
        # A cleanup error (a ChatNoir page written as a stopped run removes it) must not turn a stop into an error.
        with run_scratch("touche-cache-") as temporary:
            return run(replace(settings, cache_dir=temporary))
    timer = StageTimer()
    with timer.stage("topics"):
        read = (read_topics(settings.topics, beside=settings.input_dir) if settings.topics
                else read_topics(settings.input_dir))
        source = candidate_source(settings)  # a wrong corpus or ChatNoir setting is said before any model loads
    log.info("%d topics from %s", len(read), settings.topics or settings.input_dir)
    foreseen = runfile.foreseen_problems(len(read), min(settings.candidates, settings.depth))
    for problem in foreseen.values():
        log.warning("TIRA will reject this run: %s", problem)

    # Before the question classifier loads: a re-rank file holding none of the topics is said without it.
    candidates, corpus_size, cache, origin = first_stage(settings, read, timer, source)
    with timer.stage("questions"):
        task, topics, analyses = topic_task(read, settings.task, settings.device, settings.precision)
    log.info("%s topics: stance labels %s", task,
             " / ".join(COMPARATIVE_LABELS if task == "comparative" else CONTROVERSIAL_LABELS))
    if (task == "comparative" and settings.stance and settings.stance_model == "cross"
            and settings.stance_depth != STANCE_DEPTH):  # the heads read comparative stance, measured better there
        log.warning("comparative topics: their stance is read by the heads alone, so --stance-depth %d is ignored",
                    settings.stance_depth)

    encoded, queries, scored = score_candidates(topics, candidates, settings, cache, timer)
    ranked = {qid: rank(candidates[qid], fusion.fuse(topic.features), settings.depth)
              for qid, topic in scored.items()}

    with timer.stage("stance"):
        best = {qid: topic.best_passages for qid, topic in scored.items()}
        stances = detect_stances(topics, ranked, best, encoded, queries, task, settings, candidates)
    if settings.balance_stance:
        argumentative = {topic.number for topic in topics
                         if analyses[topic.number].type == "argumentative"}
        ranked, stances = balance(ranked, stances, argumentative)

    with timer.stage("write"):
        rows = [row for topic in topics if topic.number in ranked
                for row in runfile.ranked_rows(topic.number, *ranked[topic.number], stances.get(topic.number),
                                               settings.tag, settings.depth)]
        path = runfile.write_run(rows, settings.output_dir, settings.overwrite)
        # A run TIRA rejects (e.g. fewer than 5 lines or 3 topics when topics found nothing) is still written,
        # but said loudly: the user learns it here, not after the submission.
        for problem in runfile.validate_run(path, task).unforeseen(foreseen):
            log.warning("TIRA will reject this run: %s", problem)
    return RunReport(path, len(ranked), len(rows), corpus_size, timer.stages, passages=len(encoded.ids),
                     origin=origin)


class TopicTask(NamedTuple):
    """The run's stance label set (controversial or comparative), its topics and each topic's question analysis."""

    task: str
    topics: list[Topic]
    analyses: dict[str, QuestionAnalysis]


def topic_task(topics: list[Topic], override: str | None = None, device: str = "auto",
               precision: str = "auto") -> TopicTask:
    """The run's stance label set (`stance.task_kind`), its topics (comparative ones with their objects) and each
    topic's question analysis, by topic number; the question classifier reads all titles at once (embedded on
    `device` at `precision`, as the run's texts are)."""
    questions = load_classifier(device=device, precision=precision)
    analyses = dict(zip((topic.number for topic in topics), questions.analyze_many([t.title for t in topics])))
    task = stance.task_kind(topics, override, lambda topic: analyses[topic.number].comparative)
    if task == "comparative":
        topics = [with_objects(topic, analyses[topic.number]) for topic in topics]
    return TopicTask(task, topics, analyses)


def with_objects(topic: Topic, analysis: QuestionAnalysis) -> Topic:
    """A topic without <objects> (2020/21 Task 2) in a comparative run gets the objects its question names, where
    the classifier reads it as a comparison ("Should school uniforms be mandatory?" named "school uniforms" and
    "mandatory"), and where they pass the checks <objects> passes (`topics.parse_objects`: "Which is better: this or
    that?" gave sides toward "that")."""
    if topic.objects is not None:
        return topic
    objects = parse_objects(analysis.objects[:2]) if analysis.comparative else None
    if objects is None:
        log.warning("topic %s: no two compared objects found in %s", topic.number, topic.quoted)
        return topic
    return replace(topic, objects=objects)


class Ranking(NamedTuple):
    """A topic's document ids and their fused scores, best first."""

    doc_ids: list[str]
    scores: list[float]


def rank(found: list[Candidate], scores: np.ndarray, depth: int) -> Ranking:
    """A topic's document ids and fused scores, best first, cut at `depth`.

    Ties keep the first-stage order: the tail below the rerank depth shares one fused score and so stays in the
    first stage's order (BM25's, ChatNoir's or the re-rank file's).
    """
    order = sorted(range(len(found)), key=lambda i: -scores[i])[:depth]
    return Ranking([found[i].doc.doc_id for i in order], [float(scores[i]) for i in order])


def detect_stances(topics: list[Topic], ranked: dict[str, Ranking],
                   best_passages: dict[str, dict[str, int]], encoded: Encoded, queries: dict[str, np.ndarray],
                   task: str, settings: RunSettings,
                   candidates: dict[str, list[Candidate]] | None = None) -> dict[str, list[str]]:
    """Stance labels for each topic's reranked documents, each read by its best passage (`best_passages`: per topic,
    document id -> row of `encoded`) and by the stance its corpus states, if any (`candidates`' documents). Below the
    rerank depth only a stated stance or a debate's turns give a label (on controversial topics); Q0 (no label) for
    the rest, and everywhere with --no-stance. On controversial topics an args.me argument that states no stance is
    read without the title its debate's arguments among the topic's candidates share, and hears the other posts
    read of its debate where its id numbers them (`app.debates`), which also label such a post below the rerank
    depth."""
    if not settings.stance:
        return {}
    model = stance.StanceModel.load(device=settings.device, precision=settings.precision)
    cross_depth = settings.stance_depth if settings.stance_model == "cross" else 0
    labels = {}
    for topic in topics:
        if topic.number not in ranked:
            continue
        doc_ids, _ = ranked[topic.number]
        best = best_passages[topic.number]
        head = reranked_head(doc_ids, best, settings.rerank_depth)
        passages = [best[doc_id] for doc_id in head]
        documents = {candidate.doc.doc_id: candidate.doc for candidate in (candidates or {}).get(topic.number, ())}
        reading = debates.stance_reading(doc_ids, head, [encoded.texts[row] for row in passages], documents,
                                         controversial=task == "controversial")
        predictions = model.predict(topic, reading.texts, encoded.vectors[passages],
                                    task, query_embeddings=queries[topic.number], cross_depth=cross_depth,
                                    stated=reading.stated, unread=[statement for _, statement in reading.unread],
                                    turns=reading.turns,
                                    unread_turns=[position for _, position in reading.unread_turns])
        labels[topic.number] = reading.labels(doc_ids, predictions)
    return labels


def reranked_head(doc_ids: list[str], best_passages: dict[str, int], rerank_depth: int) -> list[str]:
    """A topic's reranked documents in ranking order: the fused ranking keeps them above the first stage's tail."""
    return [doc_id for doc_id in doc_ids[:rerank_depth] if doc_id in best_passages]


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
