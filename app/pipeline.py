"""The story of a run: topics -> candidates -> passages -> scores -> stance -> run file.

Each step calls one stage module with plain records in and out; `run` reads top to bottom.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import debates, encoder, fusion, runfile, stance
from .cache import CorpusCache, fingerprint, text_digest
from .chatnoir import MAX_DEPTH as CHATNOIR_MAX_DEPTH
from .chatnoir import ChatNoirBackend, ChatNoirSettings, has_credentials
from .corpus import CorpusSource, check_opens, choose_source, read_documents, rerank_candidates
from .errors import ToucheError
from .files import run_scratch
from .lexical import LexicalIndex
from .passages import Passage, read_passages
from .quality import QualityModel
from .questions import QuestionAnalysis, load_classifier
from .records import Candidate, Topic
from .relevance import EMBEDDING_DIM, QUERY_NAMES, RelevanceModel, topic_queries
from .settings import RunSettings
from .topics import read_topics

log = logging.getLogger(__name__)

DEMO_INPUT = Path(__file__).parent / "demo"
# Which of a topic's encoded relevance queries is the title: the dense feature's query.
TITLE = QUERY_NAMES.index("title")


@dataclass
class RunReport:
    """What a run did: where the run is, how big it is (`topics`: those it holds; `documents`: as `FirstStage`
    counts them; `passages`: the distinct passages encoded), and seconds per stage."""

    run_path: Path
    topics: int
    rows: int
    documents: int
    stages: dict[str, float] = field(default_factory=dict)
    passages: int = 0
    origin: str = ""  # where the candidates came from (`FirstStage.origin`)


class StageTimer:
    """Seconds per stage of a run, summed where a stage runs more than once, each logged as it ends."""

    def __init__(self):
        self.stages: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - start
        log.info("%s: %.1f s", name, self.stages[name])


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
        task, topics, analyses = topic_task(read, settings.task, settings.device, settings.precision)
    log.info("%d %s topics from %s", len(topics), task, settings.topics or settings.input_dir)
    foreseen = runfile.foreseen_problems(len(topics), min(settings.candidates, settings.depth))
    for problem in foreseen.values():
        log.warning("TIRA will reject this run: %s", problem)

    candidates, corpus_size, cache, origin = first_stage(settings, topics, timer, source)

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
    "mandatory")."""
    if topic.objects is not None:
        return topic
    objects = analysis.objects if analysis.comparative else ()
    if len(objects) < 2:
        log.warning("topic %s: no two compared objects found in %s", topic.number, topic.quoted)
        return topic
    return replace(topic, objects=(objects[0], objects[1]))


class FirstStage(NamedTuple):
    """Candidates per topic, the number of documents they came from (the corpus's size; for ChatNoir and re-rank
    files the candidates counted per topic), the local corpus's cache (None for ChatNoir) and where the candidates
    came from, in words (the ChatNoir index a credentials file named, which the settings do not show)."""

    candidates: dict[str, list[Candidate]]
    documents: int
    cache: CorpusCache | None
    origin: str


def candidate_source(settings: RunSettings) -> CorpusSource | ChatNoirSettings:
    """Where the candidates come from: the local corpus (its first bytes read: a file packed otherwise than with
    gzip is an error here) or ChatNoir's settings (key, index, client limits), each checked before the work."""
    source = choose_source(settings.input_dir, settings.backend, settings.corpus, has_credentials(settings.input_dir))
    if source is None:
        return ChatNoirSettings.resolve(settings.input_dir, settings.index, settings.cache_dir / "chatnoir",
                                        page_text=settings.page_text)
    if settings.index is not None:
        log.warning("ranking %s: --index %s names a ChatNoir index and is ignored", source.name, settings.index)
    check_opens(source)
    return source


def first_stage(settings: RunSettings, topics: list[Topic], timer: StageTimer | None = None,
                source: CorpusSource | ChatNoirSettings | None = None) -> FirstStage:
    """Candidates per topic: from ChatNoir, a re-rank file as given, or BM25 over the local corpus (`source`, else
    `candidate_source`)."""
    timer = timer or StageTimer()
    source = candidate_source(settings) if source is None else source
    if isinstance(source, ChatNoirSettings):
        chatnoir = source
        with timer.stage("first-stage retrieval"):
            searched = min(settings.candidates, CHATNOIR_MAX_DEPTH)
            if searched < settings.candidates:  # the run holds at most 1,000 a topic (--depth) anyway
                log.info("ChatNoir gives at most %d results a search: --candidates %d searches %d", searched,
                         settings.candidates, searched)
            # Full texts for the reranked head only: the candidates below it follow in ChatNoir's order, and keep
            # title + snippet.
            candidates = ChatNoirBackend(chatnoir).retrieve(topics, searched, text_depth=settings.rerank_depth)
        return FirstStage(candidates, sum(len(found) for found in candidates.values()), None,
                          f"ChatNoir's index {chatnoir.index} at {chatnoir.address}")
    if source.kind == "rerank":
        with timer.stage("corpus read"):
            candidates = rerank_candidates(source, {topic.number: topic.title for topic in topics},
                                           settings.candidates)
        return FirstStage(candidates, sum(len(found) for found in candidates.values()), corpus_cache(settings, source),
                          f"the re-rank file {source.name}")
    return bm25_first_stage(settings, topics, source, timer)


def bm25_first_stage(settings: RunSettings, topics: list[Topic], source: CorpusSource, timer: StageTimer) -> FirstStage:
    """BM25 over a local corpus. Pass 1 streams the corpus into the index (skipped when the index is cached),
    keeping only ids; pass 2 after retrieval keeps the texts of candidates only, so 868k passages are never all in
    memory at once."""
    store = corpus_cache(settings, source)
    cached = store.load_index()
    if cached is None:
        doc_ids: list[str] = []

        def texts() -> Iterator[str]:
            for document in read_documents(source):
                doc_ids.append(document.doc_id)
                yield document.text

        with timer.stage("index build"):
            index = LexicalIndex.build(texts(), progress=settings.progress)
    else:
        index, doc_ids = cached
    log.info("%d documents in %s", len(doc_ids), source.name)
    with timer.stage("first-stage retrieval"):
        hits = index.search([topic.title for topic in topics], settings.candidates)
    with timer.stage("corpus read"):
        wanted = {doc_ids[row] for rows, _ in hits for row in rows}
        # The build's pass has already reported the corpus's defects; a cached index had no such pass.
        documents = {document.doc_id: document for document in read_documents(source, report=cached is not None)
                     if document.doc_id in wanted}
        # The corpus read by both passes is the one the cache key names: replaced or written to meanwhile, its
        # index was kept under the old corpus's key, and later runs on the old corpus ranked the new one's texts.
        if fingerprint(source) != store.key:
            raise ToucheError(f"{source.name} changed while the run read it (replaced or written to); run again "
                              "once it is whole")
    if cached is None:
        store.save_index(index, doc_ids)
    candidates = {
        topic.number: [Candidate(topic.number, documents[doc_ids[row]], float(score))
                       for row, score in zip(rows, scores)]
        for topic, (rows, scores) in zip(topics, hits)
    }
    return FirstStage(candidates, len(doc_ids), store, f"BM25 over {source.name}")


def corpus_cache(settings: RunSettings, source: CorpusSource) -> CorpusCache:
    """Where this corpus's index and embeddings are cached: under the cache directory, by the corpus's fingerprint."""
    return CorpusCache(settings.cache_dir, fingerprint(source))


class Reranked(NamedTuple):
    """The rerank's reading: the passages encoded, each topic's encoded queries and each topic's scores."""

    encoded: Encoded
    queries: dict[str, np.ndarray]
    scored: dict[str, TopicScores]


def score_candidates(topics: list[Topic], candidates: dict[str, list[Candidate]], settings: RunSettings,
                     cache: CorpusCache | None, timer: StageTimer | None = None) -> Reranked:
    """The rerank: the passages each topic reads of its top `rerank_depth` candidates, their embeddings (and the
    topics' queries'), and per topic the fusion features of its candidates."""
    timer = timer or StageTimer()
    with timer.stage("passages"):
        passages = choose_passages(topics, candidates, settings)
    with timer.stage("dense encoding"):
        encoded = encode_passages(passages, settings, cache)
    with timer.stage("quality"):
        # Text statistics are the document's (a window's length says nothing of the page), the embedding the passage's.
        quality = QualityModel.load().score(encoded.documents, encoded.vectors)
    with timer.stage("fusion"):
        queries = encode_queries(topics, settings)
        scored = score_features(topics, candidates, passages, encoded, quality, queries, settings)
    return Reranked(encoded, queries, scored)


def choose_passages(topics: list[Topic], candidates: dict[str, list[Candidate]],
                    settings: RunSettings) -> dict[str, dict[str, list[Passage]]]:
    """Per topic, the passages of its top `rerank_depth` candidates that the stages read (app.passages): a document
    the encoder reads whole is one passage; of a longer one, its first window and the windows BM25 finds the
    topic's title in."""
    head = {qid: [candidate.doc for candidate in found[: settings.rerank_depth]] for qid, found in candidates.items()}
    return read_passages({topic.number: topic.title for topic in topics if topic.number in head}, head,
                         lambda texts: encoder.fits(texts, settings.device, settings.max_seq_length))


@dataclass(frozen=True)
class Encoded:
    """The distinct passages that get reranked (of each topic's top `rerank_depth`), by key, with their texts,
    vectors and the whole texts of their documents."""

    ids: list[str]
    texts: list[str]
    vectors: np.ndarray
    documents: list[str]

    @property
    def rows(self) -> dict[str, int]:
        return {key: row for row, key in enumerate(self.ids)}


def encode_passages(passages: dict[str, dict[str, list[Passage]]], settings: RunSettings,
                    cache: CorpusCache | None) -> Encoded:
    """Encode each distinct passage once across topics, reusing the corpus's embedding cache if any. The cache
    keys a vector by its text's digest, not by the passage's key: a re-rank file's second text of a document is
    "id #2" in the order a run meets it, which another run's topics or depth change."""
    read = {passage.key: passage for documents in passages.values() for found in documents.values()
            for passage in found}
    ids = list(read)
    digests = [text_digest(read[key].text) for key in ids]
    texts = dict(zip(digests, (read[key].text for key in ids)))  # each distinct text once
    store = None
    if cache is not None:
        precision = encoder.resolve_precision(settings.precision, settings.device)
        store = cache.embeddings(f"minilm-{settings.max_seq_length}-{precision}-by-text")
    missing = store.missing(list(texts)) if store is not None else list(texts)
    log.info("encoding %d distinct passages (%d cached)", len(missing), len(texts) - len(missing))
    vectors = encoder.encode([texts[digest] for digest in missing], device=settings.device,
                             progress=settings.progress, max_seq_length=settings.max_seq_length,
                             precision=settings.precision)
    if store is not None:
        store.add(missing, vectors)
        store.save()
        vectors = store.get(digests)
    else:
        rows = {digest: row for row, digest in enumerate(missing)}
        vectors = vectors[[rows[digest] for digest in digests]]
    return Encoded(ids, [read[key].text for key in ids], vectors, [read[key].document for key in ids])


def encode_queries(topics: list[Topic], settings: RunSettings) -> dict[str, np.ndarray]:
    """Per topic, the embeddings of its relevance queries (title, title + description, ...), one row per query."""
    vectors = encoder.encode([query for topic in topics for query in topic_queries(topic)], device=settings.device,
                             max_seq_length=settings.max_seq_length, precision=settings.precision)
    vectors = vectors.reshape(len(topics), len(QUERY_NAMES), EMBEDDING_DIM)
    return {topic.number: topic_vectors for topic, topic_vectors in zip(topics, vectors)}


@dataclass(frozen=True)
class TopicScores:
    """A topic's fusion features, one value per candidate, and the passage (a row of `Encoded`) each of its top
    `rerank_depth` candidates is best read by: the stance stage reads that one."""

    features: dict[str, np.ndarray]
    best_passages: dict[str, int]


def score_features(topics: list[Topic], candidates: dict[str, list[Candidate]],
                   passages: dict[str, dict[str, list[Passage]]], encoded: Encoded, quality: np.ndarray,
                   queries: dict[str, np.ndarray], settings: RunSettings) -> dict[str, TopicScores]:
    """Per topic, the fusion features of its candidates.

    The top `rerank_depth` candidates are scored passage by passage: dense, quality and relevance read the
    passage's embedding; text statistics (length, the quality head's counts) and the first stage's score are the
    document's. A document takes the mean of its best passages' features (`fusion.aggregate`). The first stage's
    score covers every candidate; of each other feature the tail gets the head's minimum, so with non-negative
    weights it fuses below the head, in first-stage order.
    """
    rows = encoded.rows
    # Words per passage row: its document's, counted once per document (its windows share the text).
    counted = {text: len(text.split()) for text in dict.fromkeys(encoded.documents)}
    word_counts = np.array([counted[text] for text in encoded.documents])
    relevance = RelevanceModel.load()

    scored = {}
    for topic in topics:
        found = candidates.get(topic.number, [])
        if not found:
            log.warning("topic %s: no candidates", topic.number)
            continue
        head = found[: settings.rerank_depth]
        read = [[rows[passage.key] for passage in passages[topic.number][candidate.doc.doc_id]]
                for candidate in head]
        lexical = fusion.lexical_feature([candidate.score for candidate in found])
        flat = np.array([row for document in read for row in document])
        sizes = [len(document) for document in read]
        documents = np.split(np.arange(len(flat)), np.cumsum(sizes)[:-1])
        per_passage = {
            "dense": encoded.vectors[flat] @ queries[topic.number][TITLE],
            "length": fusion.length_prior(word_counts[flat]),
            "quality": quality[flat],
            "relevance": relevance.score(topic, word_counts[flat], encoded.vectors[flat], queries[topic.number],
                                         np.repeat(lexical[: len(head)], sizes)),
        }
        per_document, best = fusion.aggregate(per_passage, documents)
        copies = fusion.first_copies([candidate.doc.text for candidate in head])
        scored[topic.number] = TopicScores(
            features=fusion.features(lexical, per_document, copies),
            best_passages={candidate.doc.doc_id: int(flat[row]) for candidate, row in zip(head, best[copies])},
        )
    return scored


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
