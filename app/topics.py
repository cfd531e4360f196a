"""Read Touché topics in every layout TIRA mounts: topics.xml, TIREx queries.xml and queries.jsonl."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from lxml import etree

from .errors import ToucheError
from .records import Topic

log = logging.getLogger(__name__)

TOPIC_FILES = ("topics.xml", "queries.xml", "queries.jsonl")


def find_topics_file(input_dir: Path) -> Path:
    """The first of topics.xml, queries.xml, queries.jsonl present in the input directory."""
    for name in TOPIC_FILES:
        if (input_dir / name).is_file():
            return input_dir / name
    raise ToucheError(f"no topics in {input_dir}: expected one of {', '.join(TOPIC_FILES)}")


def read_topics(path: Path) -> list[Topic]:
    """Parse a topics file (XML or JSONL by suffix); errors on malformed input, no topics or duplicates."""
    if path.is_dir():
        path = find_topics_file(path)
    topics = _read_jsonl(path) if path.suffix == ".jsonl" else _read_xml(path)
    if not topics:
        raise ToucheError(f"{path}: no topics found")
    seen: set[str] = set()
    for topic in topics:
        if topic.number in seen:
            raise ToucheError(f"{path}: duplicate topic number {topic.number}")
        seen.add(topic.number)
    return topics


def parse_objects(value: str | None) -> tuple[str, str] | None:
    """`"laptop, desktop"` -> `("laptop", "desktop")`; anything but two objects gives None."""
    if not value:
        return None
    parts = [part.strip() for part in value.split(",") if part.strip()]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _text(element, *names: str) -> str:
    for name in names:
        child = element.find(name)
        if child is not None and child.text and child.text.strip():
            return " ".join(child.text.split())
    return ""


def _read_xml(path: Path) -> list[Topic]:
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        root = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as error:
        raise ToucheError(f"{path}: malformed XML: {error}") from None
    topics = []
    for element in root.iter("topic"):
        number = (element.get("number") or _text(element, "number", "num", "qid")).strip()
        title = _text(element, "title", "query")
        if not number or not title:
            raise ToucheError(f"{path}: a <topic> lacks its number or title (line {element.sourceline})")
        objects_text = _text(element, "objects")
        objects = parse_objects(objects_text)
        if objects_text and objects is None:
            log.warning("topic %s: <objects>%s</objects> does not name two objects; ignored", number, objects_text)
        topics.append(Topic(number=number, title=title, description=_text(element, "description"),
                            narrative=_text(element, "narrative"), objects=objects))
    return topics


def _read_jsonl(path: Path) -> list[Topic]:
    topics = []
    with path.open(encoding="utf-8-sig") as lines:
        for line_number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                number, title = str(record["qid"]).strip(), " ".join(str(record["query"]).split())
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ToucheError(f"{path}:{line_number}: expected a JSON object with 'qid' and 'query'") from None
            if not number or not title:
                raise ToucheError(f"{path}:{line_number}: empty qid or query")
            topics.append(Topic(number=number, title=title, description=record.get("description") or "",
                                narrative=record.get("narrative") or "",
                                objects=parse_objects(record.get("objects"))))
    return topics
