"""Supervised relevance: how well a passage answers a topic, as a score in [0, 1].

MiniLM cosine with the title alone ranks the judged Touché 2022 passages at 0.71 judged-only nDCG@5; the
description and narrative say more about what counts as relevant, and what an answering passage looks like
(argumentative, on the compared objects) is similar across topics. This head learns both from the dev qrels
(``python -m app.training.relevance``):

* :func:`relevance_features`: cosine of the passage with four queries built from the topic (:func:`topic_queries`),
  the normalised BM25 score and the length prior, standardised;
* the passage's all-MiniLM-L6-v2 embedding (topic-independent: what relevant passages look like).

A linear model with a sigmoid, stored as a small ``.npz`` in ``app/models/`` and loaded with
:meth:`RelevanceModel.load`. Trained pointwise (grades 0/1/2) and pairwise within topics, regularisation chosen by
topic-held-out cross-validation.
"""

from __future__ import annotations


import numpy as np

from app.encoder import EMBEDDING_DIM
from app.errors import ToucheError
from app.heads import LinearHead
from app.fusion import length_prior
from app.records import Topic
from app.settings import MODELS_DIR

DEFAULT_MODEL_PATH = MODELS_DIR / "relevance.npz"
QUERY_NAMES = ("title", "title_description", "description", "narrative")
FEATURE_NAMES = tuple(f"dense_{name}" for name in QUERY_NAMES) + ("lexical", "length")


def topic_queries(topic: Topic) -> list[str]:
    """The four query texts of a topic, in :data:`QUERY_NAMES` order; a missing field falls back to the title."""
    description = topic.description.strip() or topic.title
    narrative = topic.narrative.strip() or topic.title
    return [topic.title, f"{topic.title} {topic.description}".strip(), description, narrative]


def relevance_features(embeddings: np.ndarray, query_embeddings: np.ndarray, lexical: np.ndarray,
                       word_counts: np.ndarray) -> np.ndarray:
    """Raw features per passage (columns in :data:`FEATURE_NAMES`).

    `query_embeddings` holds the encoded :func:`topic_queries` (4 rows); `lexical` is the BM25 score divided by
    the topic's best one, as the pipeline's lexical fusion feature.
    """
    query_embeddings = np.asarray(query_embeddings, dtype=np.float32)
    if query_embeddings.shape != (len(QUERY_NAMES), EMBEDDING_DIM):
        raise ToucheError(f"relevance: expected {len(QUERY_NAMES)} query embeddings of size {EMBEDDING_DIM}, "
                          f"got shape {query_embeddings.shape}")
    cosines = np.asarray(embeddings, dtype=np.float32) @ query_embeddings.T
    return np.hstack([cosines, np.asarray(lexical, dtype=np.float32)[:, None],
                      length_prior(word_counts)[:, None]]).astype(np.float32)


class RelevanceModel(LinearHead):
    """The relevance head over :func:`relevance_features` and the passage embedding; trained by
    ``app.training.relevance``."""

    NAME = "relevance"
    FEATURE_NAMES = FEATURE_NAMES
    DEFAULT_PATH = DEFAULT_MODEL_PATH
    TRAINER = "relevance"

    def logits(self, features: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
        """Raw scores from :func:`relevance_features` rows and the passages' embeddings."""
        return self.linear(features, embeddings)

    def score(self, topic: Topic, word_counts: np.ndarray, embeddings: np.ndarray,
              query_embeddings: np.ndarray | None, lexical: np.ndarray) -> np.ndarray:
        """Relevance of each passage to `topic` in [0, 1].

        `word_counts` are the passages' lengths in words (their documents', for windows of a long one: the pipeline
        counts each document once); `embeddings` the passages' app.encoder rows; `query_embeddings` the encoded
        :func:`topic_queries` (encoded here when None); `lexical` the passages' BM25 scores divided by the topic's
        best.
        """
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if embeddings.shape != (len(word_counts), EMBEDDING_DIM):
            raise ToucheError(f"relevance: expected embeddings of shape ({len(word_counts)}, {EMBEDDING_DIM}), "
                              f"got {embeddings.shape}")
        if query_embeddings is None:
            from app.encoder import encode

            query_embeddings = encode(topic_queries(topic))
        features = relevance_features(embeddings, query_embeddings, lexical, word_counts)
        return self.squash(self.logits(features, embeddings))
