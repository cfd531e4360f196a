"""The first stage of a run: each topic's candidates, from ChatNoir, from a re-rank file as given, or by BM25 over
the local corpus; the source is chosen and checked (`candidate_source`) before any model loads."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .cache import CorpusCache, fingerprint
from .chatnoir import MAX_DEPTH as CHATNOIR_MAX_DEPTH
from .chatnoir import ChatNoirBackend, ChatNoirSettings, has_credentials
from .corpus import CorpusSource, check_opens, choose_source, read_documents, rerank_candidates
from .errors import ToucheError
from .html import PAGE_TEXT
from .logs import StageTimer
from .passages import PassageIndex
from .records import Candidate, Topic, unread, unread_cut
from .settings import RunSettings

log = logging.getLogger(__name__)


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
        return ChatNoirSettings.resolve(settings.input_dir, settings.index, cache_root(settings) / "chatnoir",
                                        page_text=settings.page_text)
    if settings.index is not None:
        log.warning("ranking %s: --index %s names a ChatNoir index and is ignored", source.name, settings.index)
    if settings.page_text != PAGE_TEXT:
        log.warning("ranking %s: --page-text %s reads ChatNoir's pages and is ignored", source.name,
                    settings.page_text)
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
            candidates = unread_cut(rerank_candidates(source, {topic.number: topic.title for topic in topics},
                                                      settings.candidates), settings.rerank_depth)
        return FirstStage(candidates, sum(len(found) for found in candidates.values()), corpus_cache(settings, source),
                          f"the re-rank file {source.name}")
    return bm25_first_stage(settings, topics, source, timer)


def bm25_first_stage(settings: RunSettings, topics: list[Topic], source: CorpusSource, timer: StageTimer) -> FirstStage:
    """BM25 over a local corpus, each document scored by its best passage (`PassageIndex`). Pass 1 streams the
    corpus into the index (skipped when the index is cached), keeping only ids; pass 2 after retrieval keeps the
    texts of candidates only, so 868k passages are never all in memory at once."""
    store = corpus_cache(settings, source)
    cached = store.load_index()
    if cached is None:
        doc_ids: list[str] = []

        def texts() -> Iterator[str]:
            for document in read_documents(source):
                doc_ids.append(document.doc_id)
                yield document.text

        with timer.stage("index build"):
            index = PassageIndex.build(texts(), progress=settings.progress)
    else:
        index, doc_ids = cached
    log.info("%d documents in %s", len(doc_ids), source.name)
    with timer.stage("first-stage retrieval"):
        hits = index.search([topic.title for topic in topics], settings.candidates)
    with timer.stage("corpus read"):
        wanted = {doc_ids[row] for rows, _ in hits for row in rows}
        read = {doc_ids[row] for rows, _ in hits for row in rows[:settings.rerank_depth]}
        # The build's pass has already reported the corpus's defects; a cached index had no such pass.
        documents = {document.doc_id: document if document.doc_id in read else unread(document)
                     for document in read_documents(source, report=cached is not None) if document.doc_id in wanted}
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
    return CorpusCache(cache_root(settings), fingerprint(source))


def cache_root(settings: RunSettings) -> Path:
    """The cache directory the stages write to; a stage called alone needs one (`pipeline.run` gives a run without
    one a temporary directory): without it the first write was a TypeError."""
    if settings.cache_dir is None:
        raise ValueError("the stage needs settings.cache_dir, a directory for its caches (pipeline.run makes a "
                         "temporary one)")
    return settings.cache_dir
