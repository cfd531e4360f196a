"""The rerank of a run: the passages each topic reads of its top `rerank_depth` candidates, their embeddings, and
per topic the fusion features (dense, quality, relevance, length, the first stage's score) of its candidates."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import encoder, fusion
from .cache import CorpusCache, text_digest
from .logs import StageTimer
from .passages import Passage, read_passages
from .quality import QualityModel
from .records import Candidate, Topic
from .relevance import EMBEDDING_DIM, QUERY_NAMES, RelevanceModel, topic_queries
from .settings import RunSettings

log = logging.getLogger(__name__)

# Which of a topic's encoded relevance queries is the title: the dense feature's query.
TITLE = QUERY_NAMES.index("title")


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
    with timer.stage("relevance features"):  # the queries' embeddings, the relevance head and each feature
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
    queries = [query for topic in topics for query in topic_queries(topic)]
    # A title-only topic asks its title four times: each distinct query is encoded once.
    distinct = list(dict.fromkeys(queries))
    encoded = encoder.encode(distinct, device=settings.device, max_seq_length=settings.max_seq_length,
                             precision=settings.precision)
    row = {query: index for index, query in enumerate(distinct)}
    vectors = encoded[[row[query] for query in queries]].reshape(len(topics), len(QUERY_NAMES), EMBEDDING_DIM)
    return {topic.number: topic_vectors for topic, topic_vectors in zip(topics, vectors)}


@dataclass(frozen=True)
class TopicScores:
    """A topic's fusion features, one value per candidate, and the passages (rows of `Encoded`, best first, at most
    `fusion.DOCUMENT_PASSAGES`) each of its top `rerank_depth` candidates is best read by: the stance stage reads
    the best, on comparative topics all of them together."""

    features: dict[str, np.ndarray]
    read_passages: dict[str, list[int]]


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
    counted = {text: fusion.counted_words(text) for text in dict.fromkeys(encoded.documents)}
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
        lexical = fusion.lexical_feature([candidate.score for candidate in found], len(head))
        flat = np.array([row for document in read for row in document])
        sizes = [len(document) for document in read]
        documents = np.split(np.arange(len(flat)), np.cumsum(sizes)[:-1])
        stand_in = np.array([candidate.doc.stand_in for candidate in head], bool)
        words, read_quality = typical_where_unknown(word_counts[flat], quality[flat], documents, stand_in)
        per_passage = {
            "dense": encoded.vectors[flat] @ queries[topic.number][TITLE],
            "length": fusion.length_prior(words),
            "quality": read_quality,
            "relevance": relevance.score(topic, words, encoded.vectors[flat], queries[topic.number],
                                         np.repeat(lexical[: len(head)], sizes)),
        }
        per_document, best = fusion.aggregate(per_passage, documents)
        copies = fusion.first_copies([candidate.doc.text for candidate in head])
        scored[topic.number] = TopicScores(
            features=fusion.features(lexical, per_document, copies),
            read_passages={candidate.doc.doc_id: flat[best[copy]].tolist() for candidate, copy in zip(head, copies)},
        )
    return scored


def typical_where_unknown(words: np.ndarray, quality: np.ndarray, documents: list[np.ndarray],
                          stand_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Passage rows' word counts and quality, the rows of each stand-in document (`Document.stand_in`: a page not
    fetched) given the median of the other documents' (a document's words, its passages' mean quality; a long page
    is one document of up to three rows): read as a 40-word snippet, a page whose fetch failed fell from ChatNoir's
    top 10 to the bottom of the reranked head (length prior, the relevance head's length, the quality head's text
    statistics), whatever its grade. Where every document is a stand-in they are compared with each other, as read.
    `documents` holds each document's rows, `stand_in` a flag per document."""
    if not stand_in.any() or stand_in.all():
        return words, quality
    read = [rows for rows, unknown in zip(documents, stand_in) if not unknown]
    typical_words = np.median([words[rows[0]] for rows in read])
    typical_quality = np.median([quality[rows].mean() for rows in read])
    words, quality = words.astype(np.float64), quality.copy()
    for rows in (rows for rows, unknown in zip(documents, stand_in) if unknown):
        words[rows], quality[rows] = typical_words, typical_quality
    return words, quality
