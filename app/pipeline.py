"""The story of a run: topics -> candidates -> passages -> scores -> stance -> run file.

Each step calls one stage module with plain records in and out; `_rank` reads top to bottom.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import fusion, runfile
from .errors import ToucheError
from .encoder import check_cuda
from .files import prepare_output, remove_empty, run_scratch
from .labelling import balance, detect_stances, warn_moot_stance_depth
from .logs import StageTimer
from .questions import topic_task
from .records import COMPARATIVE_LABELS, CONTROVERSIAL_LABELS
from .rerank import score_candidates
from .retrieval import candidate_source, first_stage
from .settings import RunSettings
from .topics import read_topics

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
    runfile.check_tag(settings.tag)  # as the command line does first: a caller from Python learnt it after the work
    if settings.device == "cuda":  # a CPU torch failed at the first encode (an AssertionError), after work
        check_cuda("RunSettings: device='cuda'", "device='auto' or 'cpu'")
    made = prepare_output(settings.output_dir, runfile.RUN_FILES, settings.overwrite)
    try:
        return _rank(settings)
    except BaseException:  # a caller from Python: no empty output directory of its own left behind, as the CLI
        remove_empty(made)
        raise


def _rank(settings: RunSettings) -> RunReport:
    """The run itself, its output checked: topics, candidates, scores, stance, run file."""
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
    if not any(candidates.values()):  # said before the models load, not after
        raise ToucheError(runfile.EMPTY_RUN)
    found = [len(candidates.get(topic.number, ())) for topic in read]
    for check, problem in runfile.candidate_problems(found, settings.depth).items():
        if check not in foreseen:  # topics without candidates (a re-rank file of few topics): said before the models
            foreseen[check] = problem
            log.warning("TIRA will reject this run: %s", problem)
    with timer.stage("questions"):
        stated = any(candidate.doc.stance for found in candidates.values() for candidate in found)  # args.me's
        task, topics, analyses = topic_task(read, settings.task, settings.device, settings.precision, stated)
    log.info("%s topics: stance labels %s", task,
             " / ".join(COMPARATIVE_LABELS if task == "comparative" else CONTROVERSIAL_LABELS))
    warn_moot_stance_depth(settings, task)

    encoded, queries, scored = score_candidates(topics, candidates, settings, cache, timer)
    ranked = {qid: fusion.rank(candidates[qid], fusion.fuse(topic.features), settings.depth)
              for qid, topic in scored.items()}

    with timer.stage("stance"):
        passages_read = {qid: topic.read_passages for qid, topic in scored.items()}
        stances = detect_stances(topics, ranked, passages_read, encoded, queries, task, settings, candidates)
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
