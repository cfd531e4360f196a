"""PyTerrier transformers for this project's reranker and stance labeller (`pip install '.[pyterrier]'`).

    pipeline = first_stage >> ToucheReranker() >> ToucheStance()   # any first stage yielding docno, text, score
    pt.Experiment([pipeline], touche_topics(path), qrels, [nDCG @ 5])  # from ir_measures import nDCG

Both turn a result frame into the pipeline's records (Topic, Candidate) and call the pipeline's own functions, so on
the same candidates they score, rank and label exactly as `touche run` does. A topic comes from a row's `title`
(else `query`), `description`, `narrative` and `objects` columns; a topic's candidates are its rows in first-stage
order (`rank`, else `score`). Only users import this module: the core run never imports pyterrier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt

from . import fusion, stance
from .pipeline import Encoded, detect_stances, encode_queries, rank, score_candidates, topic_task
from .records import Candidate, Document, Topic, bounded_text, scores_or_order
from .runfile import falling_scores
from .settings import RunSettings
from .topics import parse_objects, read_topics

# The passage of a head document the reranker read it best by (app.passages; the whole text of a short one) and its
# MiniLM embedding: the stance labeller reads them.
PASSAGE, DOC_VECTOR = "touche_passage", "touche_doc_vec"


@dataclass(frozen=True)
class ToucheOptions:
    """The run settings the transformers read, with `touche run`'s names and defaults."""

    rerank_depth: int = RunSettings.rerank_depth
    precision: str = RunSettings.precision
    device: str = RunSettings.device
    max_seq_length: int = RunSettings.max_seq_length
    stance_model: str = RunSettings.stance_model
    stance_depth: int = RunSettings.stance_depth

    def run_settings(self) -> RunSettings:
        # The stage functions read only these fields; the directories belong to `touche run`.
        return RunSettings(input_dir=Path(), output_dir=Path(), progress=False, rerank_depth=self.rerank_depth,
                           precision=self.precision, device=self.device, max_seq_length=self.max_seq_length,
                           stance_model=self.stance_model, stance_depth=self.stance_depth)


class ToucheReranker(pt.Transformer):
    """Reranks each topic's top `rerank_depth` candidates by the fused dense, quality and relevance scores; the rest
    follow in first-stage order. Sets `score` and `rank` and adds each head document's best passage and its
    embedding in `touche_passage` and `touche_doc_vec`."""

    def __init__(self, options: ToucheOptions = ToucheOptions()):
        self.options = options

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.result_frame(inp, extra_columns=["query", "text", "score"])
        if inp.empty:
            return inp.assign(score=pd.Series(dtype=float), rank=pd.Series(dtype=int),
                              **{PASSAGE: pd.Series(dtype=object), DOC_VECTOR: pd.Series(dtype=object)})
        settings = self.options.run_settings()
        topics, frames = by_topic(inp)
        candidates = {topic.number: to_candidates(topic, frame) for topic, frame in zip(topics, frames)}
        encoded, _, scored = score_candidates(topics, candidates, settings, None)
        ranked = []
        for topic, frame in zip(topics, frames):
            found = candidates[topic.number]
            doc_ids, scores = rank(found, fusion.fuse(scored[topic.number].features), len(found))
            frame = frame.set_index("docno", drop=False).loc[doc_ids].reset_index(drop=True)
            frame["score"] = falling_scores(scores)  # as the run file's: one sort by score gives the ranking
            best_passages = scored[topic.number].best_passages
            best = [best_passages[doc_id] for doc_id in frame["docno"].iloc[: settings.rerank_depth]]
            tail = [None] * (len(frame) - len(best))
            frame[PASSAGE] = pd.Series([encoded.texts[row] for row in best] + tail, index=frame.index, dtype=object)
            frame[DOC_VECTOR] = pd.Series([encoded.vectors[row] for row in best] + tail, index=frame.index,
                                          dtype=object)
            ranked.append(frame)
        return pt.model.add_ranks(pd.concat(ranked, ignore_index=True))


class ToucheStance(pt.Transformer):
    """Labels the stance of each topic's top `rerank_depth` documents (FIRST / SECOND / NEUTRAL / NO for comparative
    topics, PRO / CON / NEU / NO for controversial ones) in a `stance` column; Q0 below. Keeps the ranking.

    `task` picks the label set; by default it follows the topics, as `touche run` does: comparative when a topic
    names two objects or the question classifier finds a comparison.
    """

    def __init__(self, options: ToucheOptions = ToucheOptions(), task: str | None = None):
        self.options = options
        self.task = task

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.result_frame(inp, extra_columns=["query", "text", "score"])
        if inp.empty:
            return inp.assign(stance=pd.Series(dtype=str))
        settings = self.options.run_settings()
        topics, frames = by_topic(inp)
        task, topics = self._task(topics)
        ranked = {topic.number: (frame["docno"].tolist(), frame["score"].tolist())
                  for topic, frame in zip(topics, frames)}
        encoded, best = self._head(topics, frames, settings)
        candidates = {topic.number: to_candidates(topic, frame) for topic, frame in zip(topics, frames)}
        labels = detect_stances(topics, ranked, best, encoded, encode_queries(topics, settings), task, settings,
                                candidates)
        return pd.concat([frame.assign(stance=labels[topic.number]) for topic, frame in zip(topics, frames)],
                         ignore_index=True)

    def _task(self, topics: list[Topic]) -> tuple[str, list[Topic]]:
        """The label set and the topics, comparative ones with their objects: what `touche run` decides
        (`pipeline.topic_task`), without the question classifier when every topic names its objects."""
        if all(topic.objects is not None for topic in topics):
            return stance.task_kind(topics, self.task), topics
        task, topics, _ = topic_task(topics, self.task)
        return task, topics

    def _head(self, topics: list[Topic], frames: list[pd.DataFrame],
              settings: RunSettings) -> tuple[Encoded, dict[str, dict[str, int]]]:
        """The passages the head documents are read by, with embeddings, and per topic each document's passage row:
        the reranker's where every head row has them, else chosen and encoded here as the reranker does."""
        heads = [frame.iloc[: settings.rerank_depth] for frame in frames]
        if all(PASSAGE in head and DOC_VECTOR in head
               and head[DOC_VECTOR].map(lambda vector: isinstance(vector, np.ndarray)).all() for head in heads):
            rows = pd.concat(heads, ignore_index=True)
            encoded = Encoded([f"{qid} {docno}" for qid, docno in zip(rows["qid"], rows["docno"])],
                              rows[PASSAGE].tolist(), np.stack(rows[DOC_VECTOR].tolist()), rows["text"].tolist())
            best: dict[str, dict[str, int]] = {}
            for row, (qid, docno) in enumerate(zip(rows["qid"], rows["docno"])):
                best.setdefault(str(qid), {})[docno] = row
            return encoded, best
        candidates = {topic.number: to_candidates(topic, head) for topic, head in zip(topics, heads)}
        encoded, _, scored = score_candidates(topics, candidates, settings, None)
        return encoded, {qid: topic.best_passages for qid, topic in scored.items()}


def touche_topics(path: str | Path) -> pd.DataFrame:
    """A Touché topics file (or an input directory holding one) as a PyTerrier topics frame."""
    return pd.DataFrame(
        [{"qid": topic.number, "query": topic.title, "description": topic.description,
          "narrative": topic.narrative, "objects": topic.objects} for topic in read_topics(Path(path))]
    )


def by_topic(inp: pd.DataFrame) -> tuple[list[Topic], list[pd.DataFrame]]:
    """Topics in order of first appearance, each with its rows in first-stage order (`rank`, else `score`); a
    document listed twice for a topic keeps its first row, as in a run."""
    topics, frames = [], []
    for _, frame in inp.groupby("qid", sort=False):
        if "rank" in frame:
            frame = frame.sort_values("rank", kind="stable")
        else:
            frame = frame.sort_values("score", ascending=False, kind="stable")
        frame = frame.drop_duplicates("docno").reset_index(drop=True).astype({"docno": str})
        topics.append(to_topic(frame.iloc[0]))
        frames.append(frame)
    return topics, frames


def to_topic(row: pd.Series) -> Topic:
    def text(name: str) -> str:
        value = row.get(name)
        return value if isinstance(value, str) else ""

    return Topic(str(row["qid"]), text("title") or text("query"), text("description"), text("narrative"),
                 _objects(row.get("objects")))


def to_candidates(topic: Topic, frame: pd.DataFrame) -> list[Candidate]:
    """The topic's rows as candidates; where a score is no finite number (NaN, inf, not a number) the rows' order
    scores them all, as a re-rank file's order does for `touche run` (`corpus.read_rerank`)."""
    scores = scores_or_order([_finite(score) for score in frame["score"]])
    return [Candidate(topic.number, Document(str(docno), bounded_text(str(text))), score)
            for docno, text, score in zip(frame["docno"], frame["text"], scores)]


def _finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _objects(value) -> tuple[str, str] | None:
    """`("cat", "dog")`, `["cat", "dog"]` or `"cat, dog"`; anything else is no objects."""
    if isinstance(value, str):
        return parse_objects(value)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return str(value[0]), str(value[1])
    return None
