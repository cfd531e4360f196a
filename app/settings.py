"""A run's settings, resolved from flags and the environment before any work. It loads no model and imports no
torch, so the command line takes its defaults from here."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from pathlib import Path

from .encoder import MAX_SEQ_LENGTH
from .html import PAGE_TEXT

# Documents per topic whose stance the cross-encoder reads (see RunSettings.stance_model): the whole reranked head at
# the default rerank depth. Stance is judged over every judged document a run ranks, most of them below a run's top
# 10, where the heads alone read PRO / CON far worse than the cross-encoder (ArgKP-2021 held-out arguments 0.646 vs
# 0.859, UKPConvArg1 debate posts 0.520 vs 0.666; `scripts/stance_experiments.py stated`, `ukp-sides`). What it
# costs on tira-input as controversial topics, against a depth of 10: README, Benchmarks.
STANCE_DEPTH = 100
# What reads controversial stance (RunSettings.stance_model): the cross-encoder with the heads, or the heads alone.
STANCE_MODELS = ("cross", "head")
# Documents a run may hold of a topic (Touché's bound; `--depth`'s most).
MAX_DEPTH = 1000
# Where the shipped models are and where `touche train` writes them by default; where the training data is by
# default: the checkout's ../shared/data (docs/DATA.md).
MODELS_DIR = Path(__file__).resolve().parent / "models"
DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


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
    # How ChatNoir's pages are read (app.html.read_page): "main" content or "full" visible text.
    page_text: str = PAGE_TEXT
    cache_dir: Path | None = None
    # Dense scoring (and quality, stance) for the top `rerank_depth` first-stage candidates per topic; the rest
    # follow them in first-stage order (BM25, ChatNoir's, the re-rank file's).
    rerank_depth: int = 100
    max_seq_length: int = MAX_SEQ_LENGTH
    precision: str = "auto"
    stance: bool = True
    # "cross": on controversial topics the stance cross-encoder (app.stance_cross) also reads each topic's top
    # `stance_depth` documents; "head": the heads on the passage embeddings alone (app.stance), for cheap runs.
    stance_model: str = "cross"
    stance_depth: int = STANCE_DEPTH
    task: str | None = None
    balance_stance: bool = False
    # --corpus: the local corpus file to rank when the input directory holds more than one (app.corpus).
    corpus: Path | None = None
    # --topics: the topics file (resolved: app.topics.topics_file) when the input directory's is not named as TIRA
    # names it (app.topics.TOPIC_FILES).
    topics: Path | None = None

    def __post_init__(self):
        """What `touche run`'s options allow (typer checks them there); a stage called alone with other values
        failed deep inside (`rerank_depth=0`: an IndexError in numpy) or ran silently otherwise (`rerank_depth=-1`
        reranked all but the last candidate, `precision="bf17"` ran fp32, `stance_model="crosss"` no cross-encoder).
        Paths given as strings are taken as paths (`input_dir="in"` was an AttributeError)."""
        from .encoder import DEVICES, PRECISIONS

        for name in ("input_dir", "output_dir", "cache_dir", "corpus", "topics"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value))
        counts = {"candidates": 1, "depth": 1, "rerank_depth": 1, "max_seq_length": 1, "stance_depth": 0}
        for name, least in counts.items():
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < least:
                raise ValueError(f"RunSettings: {name} must be an integer of at least {least}, got {value!r}")
            object.__setattr__(self, name, int(value))  # np.int64(50) as 50
        if self.depth > MAX_DEPTH:  # a longer run was written, then rejected
            raise ValueError(f"RunSettings: depth must be at most {MAX_DEPTH}, got {self.depth}")
        choices = {"precision": PRECISIONS, "device": DEVICES, "stance_model": STANCE_MODELS}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"RunSettings: {name} must be one of {', '.join(allowed)}, "
                                 f"got {getattr(self, name)!r}")
