"""PyTerrier transformers for this project's reranker and stance labeller (`pip install '.[pyterrier]'`).

    pipeline = first_stage >> ToucheReranker() >> ToucheStance()   # any first stage yielding docno, text, score
    pt.Experiment([pipeline], touche_topics(path), qrels, [nDCG @ 5])  # from ir_measures import nDCG

Both turn a result frame into the pipeline's records (Topic, Candidate) and call the pipeline's own functions, so on
the same candidates they score, rank and label exactly as `touche run` does. A topic comes from a row's `title`
(else `query_0`, the query before a rewrite, else `query`), `description`, `narrative` and `objects` columns; a
topic's candidates are its rows read as `touche run` reads a re-rank file's lines (`by_topic`). Only users import
this module: the core run never imports pyterrier.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt

from . import fusion, stance
from .fusion import Ranking, rank
from .labelling import detect_stances
from .questions import topic_task
from .rerank import Encoded, encode_queries, score_candidates
from .corpus import Defects, FirstStageOrder, first_stage_number
from .encoder import check_cuda
from .errors import ToucheError
from .records import Candidate, Document, Topic, bounded_text, query_id, record_id, unread_cut, visible
from .runfile import falling_scores
from .settings import RunSettings
from .topics import bounded_topic, clean_field, read_topics

log = logging.getLogger(__name__)

# The passage of a head document the reranker read it best by (app.passages; the whole text of a short one) and its
# MiniLM embedding, and a long document's second best (None for one of one passage): the stance labeller reads them.
PASSAGE, DOC_VECTOR = "touche_passage", "touche_doc_vec"
SECOND_PASSAGE, SECOND_VECTOR = "touche_passage_2", "touche_doc_vec_2"
_PASSAGE_COLUMNS = (PASSAGE, DOC_VECTOR, SECOND_PASSAGE, SECOND_VECTOR)


@dataclass(frozen=True)
class ToucheOptions:
    """The run settings the transformers read, with `touche run`'s names and defaults."""

    rerank_depth: int = RunSettings.rerank_depth
    precision: str = RunSettings.precision
    device: str = RunSettings.device
    max_seq_length: int = RunSettings.max_seq_length
    stance_model: str = RunSettings.stance_model
    stance_depth: int = RunSettings.stance_depth

    def __post_init__(self):
        """The values `touche run`'s options allow; others were taken silently (`rerank_depth=-2` reranked all
        but the last two rows, `stance_model="crosss"` turned the cross-encoder off) or failed deep inside."""
        try:  # RunSettings checks them as `touche run`'s options do
            settings = self.run_settings()
        except ValueError as error:
            raise ToucheError(str(error).replace("RunSettings:", "ToucheOptions:", 1)) from None
        for name in ("rerank_depth", "stance_depth", "max_seq_length"):
            object.__setattr__(self, name, getattr(settings, name))  # np.int64(50) as 50
        if self.device == "cuda":  # a CPU torch failed at the first encode, an AssertionError from torch
            check_cuda("ToucheOptions: device='cuda'", "device='auto' or 'cpu'")

    def run_settings(self) -> RunSettings:
        # The stage functions read only these fields; the directories belong to `touche run`.
        return RunSettings(input_dir=Path(), output_dir=Path(), progress=False, rerank_depth=self.rerank_depth,
                           precision=self.precision, device=self.device, max_seq_length=self.max_seq_length,
                           stance_model=self.stance_model, stance_depth=self.stance_depth)


class ToucheReranker(pt.Transformer):
    """Reranks each topic's top `rerank_depth` candidates by the fused dense, quality and relevance scores; the rest
    follow in first-stage order. Sets `score` and `rank` and adds each head document's best passage and its
    embedding in `touche_passage` and `touche_doc_vec`, a long one's second best in `touche_passage_2` and
    `touche_doc_vec_2` (None for a document of one passage)."""

    def __init__(self, options: ToucheOptions = ToucheOptions()):
        self.options = options

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.result_frame(inp, extra_columns=["query", "text", "score"])
        topics, frames, candidates = by_topic(inp)
        if not topics:
            return inp.iloc[:0].assign(score=pd.Series(dtype=float), rank=pd.Series(dtype=int),
                                       **{name: pd.Series(dtype=object) for name in _PASSAGE_COLUMNS})
        settings = self.options.run_settings()
        encoded, _, scored = score_candidates(topics, candidates, settings, None)
        ranked = []
        for topic, frame in zip(topics, frames):
            found = candidates[topic.number]
            doc_ids, scores = rank(found, fusion.fuse(scored[topic.number].features), len(found))
            frame = frame.set_index("docno", drop=False).loc[doc_ids].reset_index(drop=True)
            frame["score"] = falling_scores(scores)  # as the run file's: one sort by score gives the ranking
            read = scored[topic.number].read_passages
            head = [read[doc_id] + [None] for doc_id in frame["docno"].iloc[: settings.rerank_depth]]
            tail = [None] * (len(frame) - len(head))
            columns = ((PASSAGE, DOC_VECTOR), (SECOND_PASSAGE, SECOND_VECTOR))
            for place, (text_column, vector_column) in enumerate(columns):
                rows = [passages[place] for passages in head]
                frame[text_column] = pd.Series([None if row is None else encoded.texts[row] for row in rows] + tail,
                                               index=frame.index, dtype=object)
                frame[vector_column] = pd.Series([None if row is None else encoded.vectors[row] for row in rows]
                                                 + tail, index=frame.index, dtype=object)
            ranked.append(frame)
        return pt.model.add_ranks(pd.concat(ranked, ignore_index=True))


class ToucheStance(pt.Transformer):
    """Labels the stance of each topic's top `rerank_depth` documents (FIRST / SECOND / NEUTRAL / NO for comparative
    topics, PRO / CON / NEU / NO for controversial ones) in a `stance` column; Q0 below. Keeps the ranking.

    `task` picks the label set; by default it follows the topics, as `touche run` does: comparative when a topic
    names two objects or the question classifier finds a comparison. That reads the topics of one call together,
    so where PyTerrier calls it a batch or a query at a time, pass `task` for the labels of the whole run.
    """

    def __init__(self, options: ToucheOptions = ToucheOptions(), task: str | None = None):
        if task is not None and task not in stance.TASKS:  # when built, as ToucheOptions checks its values
            raise ToucheError(f"unknown task {task!r}: choose one of {', '.join(stance.TASKS)}")
        self.options = options
        self.task = task

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.result_frame(inp, extra_columns=["query", "text", "score"])
        topics, frames, candidates = by_topic(inp)
        if not topics:
            return inp.iloc[:0].assign(stance=pd.Series(dtype=str))
        settings = self.options.run_settings()
        task, topics = self._task(topics)
        ranked = {topic.number: Ranking(frame["docno"].tolist(), frame["score"].tolist())
                  for topic, frame in zip(topics, frames)}
        encoded, best = self._head(topics, frames, candidates, settings)
        # Below the head, the texts `touche run` holds (`records.unread_cut`): a debate's closing title is sought
        # in whole texts only, and a long argument below the rerank depth is no whole text to a run.
        candidates = unread_cut(candidates, settings.rerank_depth)
        labels = detect_stances(topics, ranked, best, encoded, encode_queries(topics, settings), task, settings,
                                candidates)
        return pd.concat([frame.assign(stance=labels[topic.number]) for topic, frame in zip(topics, frames)],
                         ignore_index=True)

    def _task(self, topics: list[Topic]) -> tuple[str, list[Topic]]:
        """The label set and the topics, comparative ones with their objects: what `touche run` decides
        (`questions.topic_task`), without the question classifier when every topic names its objects."""
        if all(topic.objects is not None for topic in topics):
            return stance.task_kind(topics, self.task), topics
        task, topics, _ = topic_task(topics, self.task, self.options.device, self.options.precision)
        return task, topics

    def _head(self, topics: list[Topic], frames: list[pd.DataFrame], candidates: dict[str, list[Candidate]],
              settings: RunSettings) -> tuple[Encoded, dict[str, dict[str, list[int]]]]:
        """The passages the head documents are read by, with embeddings, and per topic each document's passage rows
        (best first): the reranker's where every head row has them, else chosen and encoded here as the reranker
        does."""
        heads = [frame.iloc[: settings.rerank_depth] for frame in frames]
        # The second passage's columns too (a frame of an older reranker, or one concatenated with such a frame,
        # has none, or NaN where the reranker wrote None): else a long document would be read by one passage alone.
        if all(PASSAGE in head and DOC_VECTOR in head and SECOND_VECTOR in head and SECOND_PASSAGE in head
               and head[DOC_VECTOR].map(lambda vector: isinstance(vector, np.ndarray)).all()
               and head[SECOND_VECTOR].map(lambda vector: vector is None or isinstance(vector, np.ndarray)).all()
               for head in heads):
            ids, texts, vectors, documents = [], [], [], []
            read: dict[str, dict[str, list[int]]] = {}
            for topic, head in zip(topics, heads):
                for _, row in head.iterrows():
                    passages = [(row[PASSAGE], row[DOC_VECTOR])]
                    if isinstance(row[SECOND_VECTOR], np.ndarray) and isinstance(row[SECOND_PASSAGE], str):
                        passages.append((row[SECOND_PASSAGE], row[SECOND_VECTOR]))
                    read.setdefault(topic.number, {})[row["docno"]] = list(range(len(ids), len(ids) + len(passages)))
                    for place, (text, vector) in enumerate(passages):
                        ids.append(f"{topic.number} {row['docno']} {place}")
                        texts.append(text)
                        vectors.append(vector)
                        documents.append(row["text"])
            return Encoded(ids, texts, np.stack(vectors), documents), read
        heads = {number: found[: settings.rerank_depth] for number, found in candidates.items()}
        encoded, _, scored = score_candidates(topics, heads, settings, None)
        return encoded, {qid: topic.read_passages for qid, topic in scored.items()}


def touche_topics(path: str | Path) -> pd.DataFrame:
    """A Touché topics file (or an input directory holding one) as a PyTerrier topics frame."""
    return pd.DataFrame(
        [{"qid": topic.number, "query": topic.title, "description": topic.description,
          "narrative": topic.narrative, "objects": topic.objects} for topic in read_topics(Path(path))]
    )


def by_topic(inp: pd.DataFrame) -> tuple[list[Topic], list[pd.DataFrame], dict[str, list[Candidate]]]:
    """Topics in order of first appearance, each with its rows and candidates in first-stage order, read as
    `touche run` reads a re-rank file's lines (`corpus.read_rerank`): ids as `record_id` reads them (2 and "2" are
    one topic, " d1" is "d1"); a row without a usable id or text (NaN, blank) skipped and counted in a warning; a
    document listed twice for a topic keeps its first row; ordered by `rank` where every row has one, else by
    `score`, else in frame order, numbers as strings read ("10" after "9"), a candidate's score as there."""
    defects, rows, best = Defects("the result frame"), {}, {}
    columns = [inp[name] if name in inp else pd.Series([None] * len(inp), index=inp.index)
               for name in ("qid", "docno", "text", "score", "rank")]
    # A column of integers stays so (11.0 -> 11; rows skipped aside); any other gives the ids read, as strings: one
    # type for the whole output (topics of "1" and 2 made pt.Experiment fail).
    integers = True
    for position, (given, docno, text, score, given_rank) in enumerate(zip(*columns)):
        qid, docno = query_id(given := _plain(given)), record_id(_plain(docno))
        if qid is not None:
            integers = integers and isinstance(given, int) and not isinstance(given, bool)
        if qid is None or docno is None:
            defects.add("row without a usable id")  # none, blank, or one a run line cannot hold ("d 1")
        elif not isinstance(text, str) or not visible(text):
            defects.add("row without text")
        elif docno in rows.setdefault(qid, {}):
            defects.add("duplicate id")
        else:
            rows[qid][docno] = position
            best.setdefault(qid, FirstStageOrder(None)).add(Document(docno, bounded_text(text)),
                                                            first_stage_number(_plain(score)),
                                                            first_stage_number(_plain(given_rank)))
    defects.report()
    topics, frames, untitled = [], [], []
    candidates = {qid: found.candidates(qid) for qid, found in best.items()}
    if in_frame_order := [qid for qid, found in best.items() if found.order == "file" and found.lines > 1]:
        log.warning("the result frame: %d of its topics in frame order (e.g. %s): a score and a rank missing or no "
                    "finite number", len(in_frame_order), in_frame_order[0])  # as a re-rank file's (read_rerank)
    for qid, found in best.items():
        frame = inp.iloc[[rows[qid][candidate.doc.doc_id] for candidate in candidates[qid]]]
        frame = frame.assign(qid=int(qid) if integers else qid,
                             docno=[c.doc.doc_id for c in candidates[qid]]).reset_index(drop=True)
        try:
            topics.append(to_topic(qid, frame.iloc[0]))
        except ToucheError as error:  # one topic without a text costs its own rows, not the others'
            untitled.append(error)
            continue
        frames.append(frame)
    if untitled and not topics:
        raise untitled[0]
    if untitled:
        log.warning("%s; its rows are skipped%s", untitled[0],
                    f" (and those of {len(untitled) - 1} more such topics)" if len(untitled) > 1 else "")
    return topics, frames, {topic.number: candidates[topic.number] for topic in topics}


def _plain(value):
    """A numpy scalar as the Python value the readers of ids and numbers take (`np.int64(2)` as 2; 2.0 as 2)."""
    value = value.item() if isinstance(value, np.generic) else value
    return int(value) if isinstance(value, float) and value.is_integer() else value


def to_topic(qid: str, row: pd.Series) -> Topic:
    """The topic of a result row, its fields read as a topics file's are (`topics.clean_field`, `bounded_topic`):
    `title`, else `query_0` (the query before a rewrite), else `query`; a row with none of them is an error."""
    def field(name: str) -> str:
        return clean_field(row.get(name))

    title = field("title") or field("query_0") or field("query")
    if not title:
        raise ToucheError(f"topic {qid}: no text in its rows' title, query_0 or query")
    objects = row.get("objects")
    objects = list(objects) if isinstance(objects, np.ndarray) else objects
    return bounded_topic(qid, title, field("description"), field("narrative"),
                         objects if isinstance(objects, (str, list, tuple)) else None)
