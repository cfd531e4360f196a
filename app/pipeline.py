"""The story of a run: topics -> candidates -> scores -> stance -> run file.

Each step calls one stage module with plain records in and out; `run` reads top to bottom.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import encoder, fusion, runfile
from .chatnoir import ChatNoirBackend, ChatNoirSettings, has_credentials
from .corpus import detect_corpus, read_documents, read_rerank
from .errors import ToucheError
from .lexical import LexicalIndex
from .records import Candidate, RunRow, Topic
from .topics import read_topics

log = logging.getLogger(__name__)

DEMO_INPUT = Path(__file__).parent / "demo"
# Full texts fetched per topic from ChatNoir's cache; deeper candidates keep title + snippet.
CHATNOIR_TEXT_DEPTH = 100


@dataclass(frozen=True)
class RunSettings:
    """Everything a run needs, already resolved from flags and the environment."""

    input_dir: Path
    output_dir: Path
    tag: str = "touche"
    candidates: int = 1000
    depth: int = 1000
    overwrite: bool = False
    device: str = "auto"
    progress: bool = True
    backend: str = "auto"
    index: str | None = None
    cache_dir: Path | None = None


@dataclass
class RunReport:
    """What a run did: where the run is, how big it is, and seconds per stage."""

    run_path: Path
    topics: int
    rows: int
    documents: int
    stages: dict[str, float] = field(default_factory=dict)


class _Timer:
    def __init__(self):
        self.stages: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - start
        log.info("%s: %.1f s", name, self.stages[name])


def run(settings: RunSettings) -> RunReport:
    timer = _Timer()
    with timer.stage("topics"):
        topics = read_topics(settings.input_dir)
    log.info("%d topics from %s", len(topics), settings.input_dir)

    candidates, corpus_size = first_stage(settings, topics, timer)

    with timer.stage("dense encoding"):
        features = score_features(topics, candidates, settings)
    with timer.stage("fusion"):
        scores = {qid: fusion.fuse(topic_features) for qid, topic_features in features.items()}

    with timer.stage("write"):
        rows = run_rows(topics, candidates, scores, settings)
        path = runfile.write_run(rows, settings.output_dir, settings.overwrite)
    return RunReport(path, len(topics), len(rows), corpus_size, timer.stages)


def first_stage(settings: RunSettings, topics: list[Topic],
                timer: _Timer) -> tuple[dict[str, list[Candidate]], int]:
    """Candidates per topic: from ChatNoir, from a re-rank file as given, or BM25 over the local corpus."""
    source = detect_corpus(settings.input_dir) if settings.backend != "chatnoir" else None
    if settings.backend == "chatnoir" or (settings.backend == "auto" and source is None
                                          and has_credentials(settings.input_dir)):
        with timer.stage("first-stage retrieval"):
            chatnoir = ChatNoirSettings.resolve(settings.input_dir, settings.index,
                                                settings.cache_dir or settings.output_dir / "chatnoir-cache")
            candidates = ChatNoirBackend(chatnoir).retrieve(topics, settings.candidates,
                                                            text_depth=CHATNOIR_TEXT_DEPTH)
        return candidates, sum(len(found) for found in candidates.values())
    if source is None:
        raise ToucheError(f"no corpus in {settings.input_dir}: expected args.me JSON, passages.jsonl[.gz], "
                          "documents.jsonl[.gz] or rerank.jsonl[.gz]")
    if source.kind == "rerank":
        with timer.stage("corpus read"):
            _, candidates = read_rerank(source)
        wanted = {topic.number for topic in topics}
        candidates = {qid: found[: settings.candidates] for qid, found in candidates.items() if qid in wanted}
        return candidates, sum(len(found) for found in candidates.values())
    with timer.stage("corpus read"):
        documents = list(read_documents(source))
    log.info("%d documents in %s", len(documents), source.name)
    with timer.stage("index build"):
        index = LexicalIndex.build((document.text for document in documents), size=len(documents),
                                   progress=settings.progress)
    with timer.stage("first-stage retrieval"):
        hits = index.search([topic.title for topic in topics], settings.candidates)
    candidates = {
        topic.number: [Candidate(topic.number, documents[row], float(score)) for row, score in zip(rows, scores)]
        for topic, (rows, scores) in zip(topics, hits)
    }
    return candidates, len(documents)


def score_features(topics: list[Topic], candidates: dict[str, list[Candidate]],
                   settings: RunSettings) -> dict[str, dict[str, np.ndarray]]:
    """Per topic, the fusion features of its candidates; each distinct document is encoded once."""
    distinct: dict[str, int] = {}
    texts: list[str] = []
    for found in candidates.values():
        for candidate in found:
            if candidate.doc.doc_id not in distinct:
                distinct[candidate.doc.doc_id] = len(texts)
                texts.append(candidate.doc.text)
    log.info("encoding %d distinct candidates", len(texts))
    doc_vectors = encoder.encode(texts, device=settings.device, progress=settings.progress)
    query_vectors = encoder.encode([topic.title for topic in topics], device=settings.device)
    word_counts = np.array([len(text.split()) for text in texts])
    features = {}
    for topic, query_vector in zip(topics, query_vectors):
        found = candidates.get(topic.number, [])
        if not found:
            continue
        rows = np.array([distinct[candidate.doc.doc_id] for candidate in found])
        lexical = np.array([candidate.score for candidate in found], dtype=np.float64)
        top = np.abs(lexical).max()
        features[topic.number] = {
            "lexical": lexical / top if top > 0 else lexical,
            "dense": doc_vectors[rows] @ query_vector,
            "length": fusion.length_prior(word_counts[rows]),
        }
    return features


def run_rows(topics: list[Topic], candidates: dict[str, list[Candidate]], scores: dict[str, np.ndarray],
             settings: RunSettings) -> list[RunRow]:
    rows: list[RunRow] = []
    for topic in topics:
        found = candidates.get(topic.number, [])
        if not found:
            log.warning("topic %s: no candidates", topic.number)
            continue
        rows += runfile.ranked_rows(topic.number, [candidate.doc.doc_id for candidate in found],
                                    list(scores[topic.number]), None, settings.tag, settings.depth)
    return rows
