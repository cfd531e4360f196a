"""Read Touché topics in every layout TIRA mounts: topics.xml, TIREx queries.xml and queries.jsonl, and, when no
topics file comes with it, the queries of a TIREx rerank.jsonl[.gz].

TIREx (`tira.ir_datasets_loader`) writes the ir_datasets query as `original_query` beside the plain `query`; for
Touché it holds title, description, narrative and objects, which relevance and stance need as much as the title.
"""

from __future__ import annotations

import ast
import html.entities
import json
import logging
import os
import re
import unicodedata
from pathlib import Path

from lxml import etree

from .corpus import Defects, json_lines
from .errors import ToucheError, listed
from .files import given_file, not_a_file
from .records import FUNCTION_WORDS, Topic, clean_text, encodable, query_id, visible

log = logging.getLogger(__name__)

# TIREx writes queries.jsonl and queries.xml of the same topics; its queries.xml (BeautifulSoup's prettify) holds a
# title's control characters (a form feed) raw, which no XML parser reads, and TIRA's own loader reads queries.jsonl.
TOPIC_FILES = ("topics.xml", "queries.jsonl", "queries.xml", "rerank.jsonl", "rerank.jsonl.gz")
_TIREX_TWINS = {"queries.jsonl": "queries.xml", "queries.xml": "queries.jsonl"}  # where one cannot be read
# A topic field's bound: Touché's narratives run to about 1,000 characters, and the question analysis takes time
# that grows with the square of a title's length (20,000 words: a minute).
MAX_TOPIC_CHARS = 5_000
MAX_NUMBER_CHARS = 100  # of a topic number: Touché's are 1 to 3 digits
MAX_TOPICS_BYTES = 64 << 20  # of a topics.xml, read whole to be parsed
# A compared object is a name ("laptop", "Microsoft Windows"); the stance stage seeks each in every passage.
MAX_OBJECT_CHARS = 200
# Words that name no object alone: objects "the, a" had passages labelled for or against "the".

def find_topics_file(input_dir: Path) -> Path:
    """The first of TOPIC_FILES present in the input directory: a re-rank file only when no topics file is there."""
    for name in TOPIC_FILES:
        if (input_dir / name).is_file():
            return input_dir / name
        if problem := not_a_file(input_dir / name):  # there, but unreadable as a file: not the next one read quietly
            raise ToucheError(f"{input_dir / name}: {problem}")
    # Touché releases its topics as topics-task-1-2020.xml, topics-task2.xml, ...: name one the user can pass.
    named = sorted(path.name for path in (input_dir.iterdir() if input_dir.is_dir() else ())
                   if path.name.lower().endswith(".xml") and path.is_file())
    hint = f"; to read {named[0]}, pass --topics {named[0]}" if named else ""
    raise ToucheError(f"no topics in {input_dir}: expected one of {', '.join(TOPIC_FILES)}{hint}")


def topics_file(input_dir: Path, choice: Path) -> Path:
    """The topics file --topics names (a path, or a file name in `input_dir`: `files.given_file`), checked as far as
    its name allows before any work."""
    path = given_file(choice, input_dir, "--topics")
    _refuse_compressed(path)
    return path


def _refuse_compressed(path: Path) -> None:
    if path.name.lower().endswith(".gz") and not path.name.startswith("rerank.jsonl"):
        raise ToucheError(f"{path}: a compressed topics file is not read; unpack it (gunzip -k {path.name})")


def read_topics(path: Path, beside: Path | None = None) -> list[Topic]:
    """Parse a topics file (XML, JSONL or a re-rank file, by name); errors on malformed input, no topics or duplicates.
    Of a directory, the first of TOPIC_FILES there (`find_topics_file`); another topics file beside it that holds
    other topics is named in a warning (TIREx writes queries.xml and queries.jsonl of the same topics), as is one in
    the directory `beside` (the input, whose topics file --topics passes over)."""
    if path.is_dir():
        chosen = find_topics_file(path)
        try:
            topics = read_topics(chosen)
        except (ToucheError, OSError) as error:  # TIREx's two files of the same topics: the other, where it reads
            twin = path / _TIREX_TWINS.get(chosen.name, "")
            if chosen.name not in _TIREX_TWINS or not twin.is_file():
                raise
            try:
                topics, chosen = read_topics(twin), twin
            except (ToucheError, OSError):
                raise error from None
        _say_other_topics(chosen, topics, path)  # says why the one not read was not
        return topics
    _refuse_compressed(path)
    if path.name.startswith("rerank.jsonl"):
        topics = _read_rerank(path)
    else:
        topics = _read_jsonl(path) if path.suffix.lower() == ".jsonl" else _read_xml(path)
    if not topics:
        raise ToucheError(f"{path}: no topics found")
    if beside is not None:
        _say_other_topics(path, topics, beside)
    seen: set[str] = set()
    for topic in topics:
        if len(topic.number) > MAX_NUMBER_CHARS:  # each of a run's lines repeats it: TIRA's limit, after the work
            size = (f"over {MAX_TOPIC_CHARS:,}" if len(topic.number) > MAX_TOPIC_CHARS  # cleaned that far only
                    else f"{len(topic.number):,}")
            raise ToucheError(f"{path}: topic number {topic.number[:20]}... is {size} characters long "
                              f"(at most {MAX_NUMBER_CHARS})")
        if topic.number in seen:
            raise ToucheError(f"{path}: duplicate topic number {topic.number}")
        seen.add(topic.number)
    _say_odd_numbers(path, topics)
    return topics


def _say_odd_numbers(path: Path, topics: list[Topic]) -> None:
    """Warn of topic numbers that qrels in digits 0-9 cannot judge ("１", written with a CJK input method) and of
    topics that are one number as integers ("01" beside "1"): both were run as written, without a word."""
    odd = [topic.number for topic in topics if topic.number.isdecimal() and not topic.number.isascii()]
    if odd:
        log.warning("%s: %d of its topic numbers are written in other digits than 0-9, which qrels will not match "
                    "(%s)", path.name, len(odd), listed(odd))
    first: dict[int, str] = {}
    twins = []
    for number in (topic.number for topic in topics if topic.number.isdecimal()):
        if first.setdefault(int(number), number) != number:
            twins.append(f"{first[int(number)]} and {number}")
    if twins:
        log.warning("%s: %d of its topics are numbered as another is, read as integers; qrels judge at most one of "
                    "each (%s)", path.name, len(twins), listed(twins))


def _say_other_topics(chosen: Path, topics: list[Topic], directory: Path) -> None:
    """Warn about each other topics file in `directory` whose topics (numbers and titles) differ from `chosen`'s, or
    which cannot be read; it never fails the run."""
    asked = {(topic.number, topic.title) for topic in topics}
    for name in TOPIC_FILES[:TOPIC_FILES.index("rerank.jsonl")]:
        other = directory / name
        if not other.is_file() or os.path.samefile(other, chosen):
            continue
        quieted = [log, logging.getLogger("app.corpus")]  # its own warnings (a field cut) were said of the chosen
        were = [logger.disabled for logger in quieted]
        found, problem = set(), None
        try:
            for logger in quieted:
                logger.disabled = True
            found = {(topic.number, topic.title) for topic in read_topics(other)}
        except (ToucheError, OSError) as error:
            problem = error
        finally:
            for logger, was in zip(quieted, were):
                logger.disabled = was
        if problem is not None:
            log.warning("reading the topics of %s; ignoring %s (%s)", chosen.name, name, problem)
        elif found != asked:
            log.warning("reading the topics of %s; ignoring %s, whose topics differ (%d of its %d, by number and "
                        "title, are not in %s, %d of %s's %d not in it)", chosen.name, name, len(found - asked),
                        len(found), chosen.name, len(asked - found), chosen.name, len(asked))


NEGATIONS = frozenset({"not", "no", "none", "neither", "nor"})


def parse_objects(value) -> tuple[str, str] | None:
    """The two compared objects as Touché and TIREx write them; anything but two different names of at most
    MAX_OBJECT_CHARS, each more than FUNCTION_WORDS, gives None (a typo such as "laptop, laptop" left no passage a
    side, "the, Nikon" gave sides toward "the").

    topics.xml says `"laptop, desktop"`; ir_datasets holds the tuple `("laptop", "desktop")`, which TIREx's
    queries.jsonl writes as a JSON list and its queries.xml as the tuple's `str()`, `"('laptop', 'desktop')"`.
    """
    if isinstance(value, str):
        if len(value) > 3 * MAX_OBJECT_CHARS:  # two names, quotes and a comma: no need to parse a megabyte
            return None
        value = _python_sequence(value) or value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(part, str) for part in value):
        return None
    parts = [part for part in map(clean_field, value) if part]
    if len(parts) != 2 or max(map(len, parts)) > MAX_OBJECT_CHARS or _one_name(*parts):
        return None
    if any(set(re.findall(r"\w+", part)) <= FUNCTION_WORDS for part in parts):  # "A", "IT" in capitals: names
        return None
    if any(part.casefold() in NEGATIONS for part in parts):  # "Should I buy a house or not?" compares no two things
        return None
    return parts[0], parts[1]


def _one_name(first: str, second: str) -> bool:
    """Whether two objects are one name written twice: in any case, punctuation apart, the last word in the plural or
    not ("tea, teas", "tea, tea.": the side followed the spelling that came first, "teas" counted for both)."""
    def words(name: str) -> list[str]:
        return re.findall(r"[\w+#]+", name.casefold())  # "C++" and "C#" are not "C"

    def forms(word: str) -> set[str]:
        return {word, word.removesuffix("s"), word.removesuffix("es")}

    (*opening, last), (*other_opening, other_last) = words(first) or [""], words(second) or [""]
    return opening == other_opening and bool(forms(last) & forms(other_last))


def _python_sequence(text: str) -> list | tuple | None:
    """The list or tuple a Python literal such as `"('a', 'b')"` denotes; None for any other text."""
    if not text.lstrip().startswith(("(", "[")):
        return None
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (list, tuple)) else None


def _objects(number: str, value) -> tuple[str, str] | None:
    objects = parse_objects(value)
    if value and objects is None:
        log.warning("topic %s: objects %.200r do not name two objects; ignored", number, value)
    return objects


def clean_field(value) -> str:
    """A text field cleaned as documents are (`clean_text`: soft hyphens go), with its whitespace collapsed, lone
    surrogates (valid JSON escapes) replaced and in Unicode's composed form (NFC, as documents are: an object "thé"
    written as "e" and an accent read as "the"), as every reader gives it; '' for anything but a string and for a
    text with nothing `visible` in it.

    A text cleaned to more than MAX_TOPIC_CHARS may end early: it is cleaned by growing prefixes, each 8 times the
    last, until one is long enough (a 60 MB narrative, cleaned whole, took 800 MB: a string of each word)."""
    if not isinstance(value, str):
        return ""
    size = 8 * MAX_TOPIC_CHARS
    while True:
        text = unicodedata.normalize("NFC", " ".join(clean_text(encodable(value[:size])).split()))
        if size >= len(value) or len(text) > MAX_TOPIC_CHARS:  # a word or an accent cut at its end lies past the cut
            break
        size *= 8
    return text if visible(text) else ""


def bounded_topic(number: str, title: str, description: str, narrative: str, objects) -> Topic:
    """A Topic whose text fields are at most MAX_TOPIC_CHARS long, said where one is cut."""
    fields = {"title": title, "description": description, "narrative": narrative}
    for name, text in fields.items():
        if len(text) > MAX_TOPIC_CHARS:
            log.warning("topic %s: %s of over %d characters cut", number, name, MAX_TOPIC_CHARS)
            fields[name] = text[:MAX_TOPIC_CHARS]
    return Topic(number=number, objects=_objects(number, objects), **fields)


def _text(element, *names: str) -> str:
    """The first named child's text, its markup's (`<i>`, entities) included and comments left out."""
    for name in names:
        child = next(iter(named(element, name, children=True)), None)
        text = element_text(child) if child is not None else ""
        if text:
            return text
    return ""


def named(element, name: str, children: bool = False) -> list:
    """The elements `name` under `element` (its `children` only, or all) in the topics file's own vocabulary: the
    root's namespace, or the default one in force where they are written (`<topics xmlns="...">`, `<topic
    xmlns="...">`, `xmlns=""`, none); an `<o:title>` of another vocabulary is none of them."""
    root = etree.QName(element.getroottree().getroot()).namespace
    candidates = element.iterchildren(f"{{*}}{name}") if children else element.iter(f"{{*}}{name}")
    return [found for found in candidates
            if (etree.QName(found).namespace or None) in (root, found.nsmap.get(None) or None)]


def _xml_field(topic, name: str) -> str:
    """A <topic>'s field: its own child, else the child of TIREx's <original_query>."""
    original = next(iter(named(topic, "original_query", children=True)), None)
    return _text(topic, name) or (_text(original, name) if original is not None else "")


def xml_title(topic) -> str:
    """A <topic>'s title: its own <title> or TIREx's <original_query>'s, else TIREx's <query>."""
    return _xml_field(topic, "title") or _text(topic, "query")


def xml_root(path: Path, data: bytes):
    """The root element of an XML file's bytes, parsed without loading any entity or DTD from outside the file: an
    entity the file declares from outside is an error, not an empty text; the entities such a DTD would define are
    read as HTML's (`_html_entities`). A UTF-8 byte order mark decides the encoding, as XML says, whatever the
    declaration claims; entities the file defines with markup (a `<topic>`) are read as that markup."""
    if data.startswith(b"\x1f\x8b"):
        raise ToucheError(f"{path}: gzip-compressed, whatever its name; unpack it first")
    encoding = "utf-8" if data.startswith(b"\xef\xbb\xbf") else None
    data = data.removeprefix(b"\xef\xbb\xbf")
    root = _parsed(path, data, encoding, resolve=False)
    dtd = root.getroottree().docinfo.internalDTD
    declared = {entity.name: entity for entity in dtd.iterentities()} if dtd is not None else {}
    reached = _reached([declared[node.name] for node in root.iter()
                        if isinstance(node, etree._Entity) and node.name in declared], declared)
    if outside := next((entity for entity in reached if entity.system_url), None):
        raise ToucheError(f"{path}: entity &{outside.name}; stands for {outside.system_url[:200]}, outside the file, "
                          "which is not read; write its text into the file")
    if any(_TOPIC_MARKUP.search(entity.content or "") for entity in reached):  # a <topic>, <objects>: read again,
        root = _parsed(path, data, encoding, resolve="internal")  # expanded
    _html_entities(path, root)
    return root


# An element of the topics' vocabulary in an entity's text, which the first reading keeps unread (its text only);
# inline markup (`<i>`) needs no second reading, which would fail on the HTML entities an outside DTD defines.
_TOPIC_MARKUP = re.compile(r"<\s*(?:[\w.-]+:)?(?:topics?|number|num|qid|title|query|description|narrative|objects"
                           r"|original_query)\b")


def _reached(used: list, declared: dict) -> list:
    """The declared entities that `used` entities stand for, themselves and through the entities their text names."""
    reached, waiting = {}, list(used)
    while waiting:
        entity = waiting.pop()
        if entity.name not in reached:
            reached[entity.name] = entity
            waiting.extend(declared[name] for name in re.findall(r"&([^;&\s]+);", entity.content or "")
                           if name in declared)
    return list(reached.values())


def _parsed(path: Path, data: bytes, encoding: str | None, resolve):
    """The root of an XML document; a ToucheError saying what is malformed, without the parser's advice on its own
    options (XML_PARSE_HUGE, xmlCtxtSetMaxAmplification), which no user can act on. `huge_tree` lifts libxml2's
    10 MB limit on one text or comment ("Resource limit exceeded" for a well-formed file of 10 MB of blank lines
    under the 64 MB the file may hold); its limit on entity amplification (a billion laughs) holds with it."""
    try:
        return etree.fromstring(data, parser=etree.XMLParser(resolve_entities=resolve, no_network=True,
                                                             encoding=encoding, huge_tree=True))
    except etree.XMLSyntaxError as error:
        reason = re.sub(r",? (?:use|try) XML_PARSE_HUGE(?: option)?|,? see xmlCtxtSetMaxAmplification\.?"
                        r"| \(<string>, line \d+\)$", "", str(error))
        raise ToucheError(f"{path}: malformed XML: {reason}") from None


def _html_entities(path: Path, root) -> None:
    """Entity references left undefined by a DOCTYPE naming a DTD outside the file (`&eacute;` under XHTML's),
    which the parser keeps unread where they would otherwise be an error: their text vanished from the topics.
    Replaced by HTML's character for the name, with a warning; a name HTML lacks is an error."""
    dtd = root.getroottree().docinfo.internalDTD
    defined = {entity.name for entity in dtd.iterentities()} if dtd is not None else set()  # read as the file says
    entities = [node for node in root.iter() if isinstance(node, etree._Entity) and node.name not in defined]
    for entity in entities:  # all named before any is replaced: a replaced one takes the line numbers along
        if entity.name + ";" not in html.entities.html5:
            raise ToucheError(f"{path}: undefined entity &{entity.name}; (line {entity.sourceline}; its DTD is "
                              "not read)")
    for entity in entities:
        parent, previous = entity.getparent(), entity.getprevious()
        value = html.entities.html5[entity.name + ";"] + (entity.tail or "")
        if previous is not None:
            previous.tail = (previous.tail or "") + value
        else:
            parent.text = (parent.text or "") + value
        parent.remove(entity)
    if entities:
        names = sorted({entity.name for entity in entities})
        log.warning("%s: entities its DTD defines read as HTML's: &%s;", path.name, "; &".join(names[:5])
                    + ("; ..." if len(names) > 5 else ""))


def element_text(element) -> str:
    """An element's text, its markup's (`<i>`, entities) included and comments left out, whitespace collapsed."""
    return clean_field(element.xpath("string()"))


def _read_xml(path: Path) -> list[Topic]:
    with path.open("rb") as stream:
        data = stream.read(MAX_TOPICS_BYTES + 1)
    if len(data) > MAX_TOPICS_BYTES:  # a 40 GB file was read whole, then "out of memory", naming no file
        raise ToucheError(f"{path}: more than {MAX_TOPICS_BYTES >> 20} MB of topics (Touché's files hold kilobytes)")
    root = xml_root(path, data)
    topics = []
    for element in named(root, "topic"):  # `<topics xmlns="...">` too
        attribute, child = (element.get("number") or "").strip(), _text(element, "number", "num", "qid")
        if attribute and child and query_id(attribute) != query_id(child):
            log.warning("topic %s: its number is %s by attribute, %s by <number>; numbered %s", attribute,
                        attribute, child, attribute)
        written = attribute or child
        title = xml_title(element)
        if not written or not title:
            which = (f"topic {written[:60]!r} lacks its title" if written else
                     f"the <topic> titled {title[:60]!r} lacks its number" if title else
                     "a <topic> lacks its number and title")
            raise ToucheError(f"{path}: {which} (line {element.sourceline})")
        number = query_id(written)
        if number is None:  # a run line splits on whitespace: "3 a" would write a seventh column
            raise ToucheError(f"{path}: topic number {written!r} is not one word (line {element.sourceline})")
        topics.append(bounded_topic(number, title, _xml_field(element, "description"),
                                    _xml_field(element, "narrative"), _xml_field(element, "objects")))
    return topics


def _json_topic(record: dict) -> Topic | None:
    """A topic from a TIREx queries.jsonl or rerank.jsonl record; None without a usable qid or title.

    Each field comes from `original_query` (the dataset's own query), else from the record itself; the title
    falls back to `query`, the dataset's default text.
    """
    original = record.get("original_query")
    original = original if isinstance(original, dict) else {}

    def field(name: str) -> str:
        return clean_field(original.get(name)) or clean_field(record.get(name))

    number = query_id(record.get("qid"))
    title = field("title") or clean_field(record.get("query"))
    if number is None or not title:
        return None
    return bounded_topic(number, title, field("description"), field("narrative"),
                         original.get("objects") or record.get("objects"))


def _exported_query(record: dict) -> dict:
    """A BEIR queries.jsonl record (`_id`, `text`, `metadata`, where BEIR's webis-touche2020 keeps description and
    narrative) or an `ir_datasets export` one (`query_id`, then `text` or `title`, `description`, `objects`, ...)
    as TIREx writes a query; a record with a `qid` as it is."""
    if "qid" in record:
        return record
    if "_id" in record:
        return {"qid": record["_id"], "query": record.get("text"), "original_query": record.get("metadata")}
    if "query_id" in record:
        return {"qid": record["query_id"], "query": record.get("text"), "original_query": record}
    return record


def _read_jsonl(path: Path) -> list[Topic]:
    topics, defects = [], Defects(path.name)
    for line_number, record in json_lines(path, defects):
        record = _exported_query(record) if isinstance(record, dict) else record
        topic = _json_topic(record) if isinstance(record, dict) else None
        if record is None:  # a topic lost is a run of other topics: no line is skipped here
            raise ToucheError(f"{path}:{line_number}: not a JSON object (invalid JSON, or a line too long)")
        if topic is None:
            qid = record.get("qid") if isinstance(record, dict) else None
            if qid is not None and (isinstance(qid, bool) or not isinstance(qid, (str, int, float))
                                    or isinstance(qid, float) and not qid.is_integer()):
                raise ToucheError(f"{path}:{line_number}: qid {json.dumps(qid)[:40]} is no string or integer")
            if isinstance(qid, (str, int)) and str(qid).strip() and query_id(qid) is None:
                raise ToucheError(f"{path}:{line_number}: qid {str(qid)[:40]!r} is not one word")  # as in XML
            if "query" in record and (number := query_id(qid)) is not None:  # the number is fine: its query is not
                what = "empty" if isinstance(record["query"], str) else f"no text ({json.dumps(record['query'])[:40]})"
                raise ToucheError(f"{path}:{line_number}: the query of topic {number!r} is {what}")
            raise ToucheError(f"{path}:{line_number}: expected a JSON object with a 'qid' and a 'query' (BEIR: an "
                              "'_id' and a 'text'; ir_datasets: a 'query_id' and a 'text' or 'title')")
        topics.append(topic)
    defects.report()
    return topics


def _read_rerank(path: Path) -> list[Topic]:
    """The queries of a TIREx re-rank file, in order of first appearance.

    Lines that are no usable record are passed over here: the corpus reader skips and reports them.
    """
    topics: dict[str, Topic] = {}
    untitled: set[str] = set()  # queries none of whose lines so far gives a text
    for _, record in json_lines(path, Defects(path.name)):
        if isinstance(record, dict) and (number := query_id(record.get("qid"))) not in topics:
            topic = _json_topic(record)
            if topic is not None:
                topics[topic.number] = topic
                untitled.discard(number)
            elif number is not None:
                untitled.add(number)
    if untitled:  # their candidates are then "no topic": say why
        log.warning("%s: %s without a text (query, title) on any line; their candidates are not ranked (%s)",
                    path.name, f"{len(untitled)} quer{'y' if len(untitled) == 1 else 'ies'}", listed(sorted(untitled)))
    return list(topics.values())
