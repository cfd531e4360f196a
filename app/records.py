"""Plain records passed between the stages of a run (in the spirit of ir_datasets' namedtuples)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    """One Touché topic; `objects` holds the two compared objects of a comparative topic."""

    number: str
    title: str
    description: str = ""
    narrative: str = ""
    objects: tuple[str, str] | None = None


@dataclass(frozen=True)
class Document:
    """A retrievable unit: an args.me argument, a passage, a web page's text.

    `stance` carries a stance the corpus itself states (args.me premises: PRO/CON toward the conclusion).
    """

    doc_id: str
    text: str
    stance: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A document retrieved for a topic by the first stage, with that stage's score."""

    qid: str
    doc: Document
    score: float


@dataclass(frozen=True)
class StancePrediction:
    """A document's stance toward a topic: a Touché label and the model's confidence in [0, 1]."""

    label: str
    confidence: float


@dataclass(frozen=True)
class RunRow:
    """One line of a TREC run: `qid stance doc_id rank score tag`."""

    qid: str
    stance: str
    doc_id: str
    rank: int
    score: float
    tag: str
