import gzip
import json
import logging
import re
from pathlib import Path

import pytest

from app.errors import ToucheError
from app.topics import parse_objects, read_topics, topics_file


def test_reads_touche_xml_with_objects(fixtures):
    topics = read_topics(fixtures / "passages")
    assert [t.number for t in topics] == ["11", "12", "13"]
    assert topics[0].objects == ("cat", "dog")
    assert topics[0].title == "Which is better for a first pet, a cat or a dog?"


def test_optional_fields_default_to_empty(fixtures):
    topics = read_topics(fixtures / "argsme" / "topics.xml")
    assert topics[0].description.startswith("A parent")
    assert topics[1].description == "" and topics[1].narrative == "" and topics[1].objects is None


def test_bom_and_whitespace_are_tolerated(fixtures):
    topics = read_topics(fixtures / "topics" / "bom.xml")
    assert topics[0].number == "5" and topics[0].title == "Is it good?"
    assert topics[1].objects == ("A", "B")


def test_tirex_queries_xml_and_jsonl(fixtures):
    assert read_topics(fixtures / "topics" / "queries.xml")[0].title == "From a TIREx export"
    jsonl = read_topics(fixtures / "topics" / "queries.jsonl")
    assert [(t.number, t.title) for t in jsonl] == [("8", "jsonl query one"), ("9", "jsonl query two")]


@pytest.mark.parametrize("name, message", [("malformed.xml", "malformed XML"), ("duplicate.xml", "duplicate"),
                                           ("empty.xml", "no topics")])
def test_bad_topics_give_clear_errors(fixtures, name, message):
    with pytest.raises(ToucheError, match=message):
        read_topics(fixtures / "topics" / name)


@pytest.mark.parametrize("topic", ['<topic><number>3 a</number><title>Q?</title></topic>',
                                   '<topic number="3\tb"><title>Q?</title></topic>'])
def test_a_topic_number_of_two_words_is_an_error(tmp_path: Path, topic):
    """A run line splits on whitespace: the number "3 a" would write a seventh column into every line."""
    (tmp_path / "topics.xml").write_text(f"<topics>{topic}</topics>")
    with pytest.raises(ToucheError, match="is not one word"):
        read_topics(tmp_path)


def test_a_qid_of_two_words_is_named_as_such(tmp_path: Path):
    (tmp_path / "queries.jsonl").write_text('{"qid": "1 2", "query": "Q?"}\n')
    with pytest.raises(ToucheError, match=r"queries.jsonl:1: qid '1 2' is not one word"):
        read_topics(tmp_path)
    for qid in ("1.5", "true", "[1]"):  # were "expected a JSON object with a 'qid' and a 'query'", or "'True'"
        (tmp_path / "queries.jsonl").write_text('{"qid": ' + qid + ', "query": "Q?"}\n')
        with pytest.raises(ToucheError, match=rf"queries.jsonl:1: qid {re.escape(qid)} is no string or integer"):
            read_topics(tmp_path)


def test_a_topics_file_nested_too_deep_gives_no_parser_advice(tmp_path: Path):
    (tmp_path / "topics.xml").write_text("<topics>" + "<x>" * 3000 + "</x>" * 3000 + "</topics>")
    with pytest.raises(ToucheError, match="malformed XML: Excessive depth") as error:
        read_topics(tmp_path)
    assert "XML_PARSE_HUGE" not in str(error.value)


@pytest.mark.parametrize("inside", ["\n" * 10_000_001, "<!--" + "c" * 10_000_001 + "-->",
                                    "<topic><number>1</number><title>Tea?</title><narrative>" + "a " * 5_000_001
                                    + "</narrative></topic>"])
def test_a_well_formed_topics_file_of_a_text_over_10_mb_is_read(tmp_path: Path, inside, caplog):
    """libxml2's limit on one text or comment (10 MB) called such a file under the 64 MB bound "malformed XML:
    Resource limit exceeded"."""
    (tmp_path / "topics.xml").write_text("<topics>" + inside + "<topic><number>2</number><title>Cats or dogs?</title>"
                                         "</topic></topics>")
    topics = read_topics(tmp_path)
    assert topics[-1].title == "Cats or dogs?"
    if "narrative" in inside:
        assert len(topics[0].narrative) <= 5000 and "narrative of over 5000 characters cut" in caplog.text


def test_a_topic_without_its_number_or_title_is_named_by_the_other(tmp_path: Path):
    """It was "a <topic> lacks its number or title (line 3)" either way."""
    (tmp_path / "topics.xml").write_text("<topics>\n<topic><number>1</number><title>Tea?</title></topic>\n"
                                         "<topic><title>Cats or dogs?</title></topic>\n<topic/></topics>")
    with pytest.raises(ToucheError, match=r"the <topic> titled 'Cats or dogs\?' lacks its number \(line 3\)"):
        read_topics(tmp_path)
    (tmp_path / "topics.xml").write_text("<topics><topic><number>1</number><title>Tea?</title></topic><topic/>"
                                         "</topics>")
    with pytest.raises(ToucheError, match=r"a <topic> lacks its number and title \(line 1\)"):
        read_topics(tmp_path)


@pytest.mark.parametrize("title", ["&#8203;", " \u200b\ufeff ", "<i>\u2060</i>", "\u206a", "\ue000", "\u0600"])
def test_a_title_of_nothing_visible_is_no_title(tmp_path: Path, title):
    """U+200B and its kin are no question: such a topic would run on an empty query. Cleaning removes the first
    three; the last three (format and private-use characters it keeps) only `clean_field`'s `visible` refuses."""
    (tmp_path / "topics.xml").write_text(f"<topics><topic><number>1</number><title>{title}</title></topic></topics>",
                                         encoding="utf-8")
    with pytest.raises(ToucheError, match=r"topics.xml: topic '1' lacks its title \(line 1\)"):
        read_topics(tmp_path)
    (tmp_path / "topics.xml").unlink()
    for query, what in (('"\\u200b"', "empty"), ('""', "empty"), ("null", r"no text \(null\)")):  # "expected a
        (tmp_path / "queries.jsonl").write_text(f'{{"qid": "1", "query": {query}}}\n')  # JSON object with a 'qid'
        with pytest.raises(ToucheError, match=rf"queries.jsonl:1: the query of topic '1' is {what}$"):  # and a 'query'"
            read_topics(tmp_path)
    (tmp_path / "queries.jsonl").write_text('{"qid": "1", "query": "Tea?"}\n{"qid": "2", "query": "Cof\n')
    with pytest.raises(ToucheError, match=r"queries.jsonl:2: not a JSON object \(invalid JSON"):  # was "expected a
        read_topics(tmp_path)  # JSON object with a 'qid' and a 'query'" (an attack on the input layouts)


def test_directory_without_topics(tmp_path: Path):
    with pytest.raises(ToucheError, match="no topics"):
        read_topics(tmp_path)


def test_objects_need_exactly_two():
    assert parse_objects(" laptop ,desktop ") == ("laptop", "desktop")
    assert parse_objects("a, b, c") is None and parse_objects("") is None


def test_objects_are_names_of_visible_text_and_bounded_length():
    """An object is sought in every passage: a megabyte of it is no name, nor is U+200B."""
    assert parse_objects(["\u200b", "tea"]) is None
    assert parse_objects(["tea\ud800", "coffee"]) == ("tea\ufffd", "coffee")
    assert parse_objects(["a" * 200, "b"]) == ("a" * 200, "b")
    assert parse_objects(["a" * 201, "b"]) is None and parse_objects("a" * 10**6 + ", b") is None
    assert parse_objects("(" * 100_000) is None
    # one object twice, or a word that names nothing: the run takes the question's objects instead (from an attack)
    for value in ("laptop, laptop", "Tea, tea", "the, Nikon", "the, a", "Canon, -"):
        assert parse_objects(value) is None, value
    for value in ("flu shot, not", "Not, tea", "house, no"):  # "... or not?" (an attack on the classifier)
        assert parse_objects(value) is None, value
    assert parse_objects("C, C++") == ("C", "C++") and parse_objects("The Beatles, a-ha") == ("The Beatles", "a-ha")
    assert parse_objects("A, B") == ("A", "B") and parse_objects("IT, HR") == ("IT", "HR")
    # another spelling of one name: the side followed the spelling that came first (an edge-case hunt)
    for value in ("tea, teas", "tea, tea.", "bus, buses", "green tea, Green Teas!"):
        assert parse_objects(value) is None, value
    assert parse_objects("C#, C") == ("C#", "C") and parse_objects("green tea, black tea") == ("green tea", "black tea")
    assert parse_objects("iPhone 12, iPhone 13") == ("iPhone 12", "iPhone 13")


def test_objects_as_tirex_writes_ir_datasets_tuples():
    assert parse_objects(["laptop", "desktop"]) == ("laptop", "desktop")  # queries.jsonl
    assert parse_objects("('laptop', \"McDonald's\")") == ("laptop", "McDonald's")  # queries.xml: str(tuple)
    assert parse_objects("('a', 'b', 'c')") is None and parse_objects([1, 2]) is None


def test_rerank_file_gives_topics_when_no_topics_file_is_there(fixtures, tmp_path):
    lines = [{"qid": "13", "query": "Tea or coffee?", "docno": "a", "text": "t",
              "original_query": {"title": "Is tea healthier than coffee?", "objects": ["tea", "coffee"]}},
             "not json", {"qid": "11", "query": "Cat or dog?", "docno": "b", "text": "t"},
             {"qid": "13", "query": "ignored", "docno": "c", "text": "t"}]
    (tmp_path / "rerank.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    topics = read_topics(tmp_path)
    assert [(t.number, t.title, t.objects) for t in topics] == [
        ("13", "Is tea healthier than coffee?", ("tea", "coffee")), ("11", "Cat or dog?", None)]
    assert read_topics(fixtures / "rerank")[0].objects == ("cat", "dog")  # its topics.xml comes first


@pytest.mark.slow
def test_every_official_topics_file_parses(shared_data):
    paths = sorted(shared_data.glob("touche-*/**/*.xml"))
    assert len(paths) >= 6  # 2020 and 2021 of both tasks, 2022 Task 2 and its TIRA input: no loop over nothing
    for path in paths:
        assert read_topics(path), path


def test_a_queries_jsonl_with_an_undecodable_byte_still_reads(tmp_path, caplog):
    (tmp_path / "queries.jsonl").write_bytes(b'\xef\xbb\xbf{"qid": "1", "query": "Caf\xe9 or tea?"}\n')
    assert [topic.title for topic in read_topics(tmp_path)] == ["Caf\ufffd or tea?"]
    assert "replaced 1 undecodable byte " in caplog.text


def test_a_title_with_markup_entities_or_a_comment_reads_whole(tmp_path):
    (tmp_path / "topics.xml").write_text(
        '<?xml version="1.0"?><!DOCTYPE topics [<!ENTITY co "coffee">]><topics>'
        "<topic><number>1</number><title>Is <i>nuclear</i> energy good?</title></topic>"
        "<topic><number>2</number><title>Tea or &co;?</title></topic>"
        "<topic><number>3</number><title><!-- draft -->School uniforms?</title></topic></topics>")
    assert [topic.title for topic in read_topics(tmp_path)] == [
        "Is nuclear energy good?", "Tea or coffee?", "School uniforms?"]


def test_entities_a_dtd_outside_the_file_defines_are_read_as_html(tmp_path, caplog):
    """Under a DOCTYPE naming an external DTD (which is never read) undefined entities vanished: "a caf or adesktop";
    without the DOCTYPE they are an error of the parser, as a name HTML lacks is now."""
    (tmp_path / "topics.xml").write_text(
        '<?xml version="1.0"?><!DOCTYPE topics SYSTEM "topics.dtd" [<!ENTITY co "coffee">]><topics>'
        "<topic><number>1</number><title>A caf&eacute; or a&nbsp;<i>desk</i>&hellip; &co; &amp; tea?</title>"
        "</topic></topics>")
    assert read_topics(tmp_path)[0].title == "A café or a desk… coffee & tea?"
    assert "topics.xml: entities its DTD defines read as HTML's: &eacute; &hellip; &nbsp;" in caplog.text
    (tmp_path / "topics.xml").write_text('<!DOCTYPE topics PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x.dtd">'
                                         "<topics><topic><number>1</number><title>Tea&nbsp;&foo;?</title></topic>"
                                         "</topics>")
    with pytest.raises(ToucheError, match=r"undefined entity &foo; \(line 1; its DTD is not read\)"):  # not None
        read_topics(tmp_path)


def test_entities_with_markup_are_read_as_it_and_entities_from_outside_are_an_error(tmp_path):
    """An entity standing for a <topic> or <objects> was dropped, its topic with it; one standing for a file's text
    (never read) was an empty text: 'Tea or &x; coffee?' read as 'Tea or coffee?'."""
    (tmp_path / "topics.xml").write_text(
        '<!DOCTYPE topics [<!ENTITY t "<topic><number>9</number><title>Tea?</title></topic>">'
        '<!ENTITY o "<objects>tea, coffee</objects>"><!ENTITY co "coffee">]>'
        "<topics>&t;<topic><number>1</number><title>Tea or &co;?</title>&o;</topic></topics>")
    assert [(topic.number, topic.title, topic.objects) for topic in read_topics(tmp_path)] == [
        ("9", "Tea?", None), ("1", "Tea or coffee?", ("tea", "coffee"))]
    (tmp_path / "topics.xml").write_text(  # through another entity; inline markup beside HTML's entities
        '<!DOCTYPE topics SYSTEM "x.dtd" [<!ENTITY a "<topic><number>2</number><title>B?</title></topic>">'
        '<!ENTITY c "&a;"><!ENTITY m "<i>green</i>">]>'
        "<topics>&c;<topic><number>1</number><title>Caf&eacute; or &m; tea?</title></topic></topics>")
    with pytest.raises(ToucheError, match="Entity 'eacute' not defined"):  # both at once: read again, strictly
        read_topics(tmp_path)
    (tmp_path / "topics.xml").write_text(
        '<!DOCTYPE topics SYSTEM "x.dtd" [<!ENTITY m "<i>green</i>">]>'
        "<topics><topic><number>1</number><title>Caf&eacute; or &m; tea?</title></topic></topics>")
    assert [topic.title for topic in read_topics(tmp_path)] == ["Café or green tea?"]
    (tmp_path / "topics.xml").write_text(
        '<!DOCTYPE topics [<!ENTITY a "<topic><number>2</number><title>B?</title></topic>"><!ENTITY c "&a;">]>'
        "<topics>&c;<topic><number>1</number><title>A?</title></topic></topics>")
    assert [topic.number for topic in read_topics(tmp_path)] == ["2", "1"]
    for declared, used in [('<!ENTITY x SYSTEM "file:///etc/hostname">', "&x;"),
                           ('<!ENTITY x SYSTEM "file:///etc/hostname"><!ENTITY y "a &x; b">', "&y;")]:
        (tmp_path / "topics.xml").write_text(f"<!DOCTYPE topics [{declared}]><topics><topic><number>1</number>"
                                             f"<title>Tea or {used} coffee?</title></topic></topics>")
        with pytest.raises(ToucheError, match=r"topics.xml: entity &x; stands for file:///etc/hostname, outside the "
                                              "file, which is not read"):
            read_topics(tmp_path)


def test_a_byte_order_mark_decides_the_encoding_and_compression_is_told_by_the_bytes(tmp_path):
    """XML reads a document by its BOM whatever its declaration says: 'Café' under a Latin-1 declaration was 'CafÃ©'."""
    for declared in ("ISO-8859-1", "UTF-16"):
        (tmp_path / "topics.xml").write_bytes(f'\ufeff<?xml version="1.0" encoding="{declared}"?><topics><topic>'
                                              "<number>1</number><title>Café?</title></topic></topics>".encode())
        assert read_topics(tmp_path)[0].title == "Café?"
    (tmp_path / "topics.xml").write_bytes(gzip.compress(b"<topics/>"))
    with pytest.raises(ToucheError, match=r"topics.xml: gzip-compressed, whatever its name; unpack it first$"):
        read_topics(tmp_path)


def test_topic_numbers_are_read_as_qrels_write_them(tmp_path, caplog):
    """A right-to-left mark pasted with a number made a topic no qrels judge; a number of 100,000 digits, repeated on
    every line, made a run TIRA rejects, said only after the work; a number attribute beside a <number> that says
    otherwise is said."""
    (tmp_path / "topics.xml").write_text('<topics><topic><number>\u200f7\u202c</number><title>Tea?</title></topic>'
                                         '<topic number="8"><number>9</number><title>Coffee?</title></topic></topics>')
    assert [topic.number for topic in read_topics(tmp_path)] == ["7", "8"]
    assert "topic 8: its number is 8 by attribute, 9 by <number>; numbered 8" in caplog.text
    caplog.clear()
    (tmp_path / "topics.xml").write_text('<topics><topic number="&#x200F;5"><number>5</number><title>Tea?</title>'
                                         "</topic></topics>")
    assert [topic.number for topic in read_topics(tmp_path)] == ["5"] and not caplog.text
    (tmp_path / "topics.xml").write_text(f"<topics><topic><number>{'1' * 101}</number><title>Tea?</title></topic>"
                                         "</topics>")
    with pytest.raises(ToucheError, match=r"topic number 1{20}\.\.\. is 101 characters long \(at most 100\)"):
        read_topics(tmp_path)


def test_topic_numbers_no_qrels_tell_apart_or_match_are_said(tmp_path, caplog):
    """A number in fullwidth digits and "01" beside "1" were run as written, without a word."""
    numbers = ("1", "01", "\uff12", "3")
    (tmp_path / "topics.xml").write_text("<topics>" + "".join(
        f"<topic><number>{number}</number><title>Tea {number}?</title></topic>" for number in numbers) + "</topics>")
    with caplog.at_level(logging.WARNING):
        assert [topic.number for topic in read_topics(tmp_path)] == ["1", "01", "\uff12", "3"]
    assert caplog.messages == [
        "topics.xml: 1 of its topic numbers are written in other digits than 0-9, which qrels will not match (\uff12)",
        "topics.xml: 1 of its topics are numbered as another is, read as integers; qrels judge at most one of each "
        "(1 and 01)"]


def test_malformed_xml_is_said_without_the_parsers_own_terms(tmp_path):
    (tmp_path / "topics.xml").write_text("<topics><topic></topics>")
    with pytest.raises(ToucheError, match=r"malformed XML: .*line 1, column \d+$"):  # not "(<string>, line 1)"
        read_topics(tmp_path)


def test_topics_in_a_default_namespace_are_read(tmp_path):
    """`<topics xmlns="...">` was "no topics found"."""
    (tmp_path / "topics.xml").write_text('<topics xmlns="http://example.org/touche"><topic><number>1</number>'
                                         "<title>Tea or coffee?</title><objects>tea, coffee</objects></topic></topics>")
    assert [(t.number, t.title, t.objects) for t in read_topics(tmp_path)] == [("1", "Tea or coffee?",
                                                                               ("tea", "coffee"))]
    (tmp_path / "topics.xml").write_text('<topics xmlns:o="urn:o"><topic><number>1</number><o:title>Other</o:title>'
                                         "<title>Tea?</title></topic></topics>")  # another namespace's is no title
    assert read_topics(tmp_path)[0].title == "Tea?"
    for topic in ('<t:topics xmlns:t="urn:a"><topic><number>1</number><title>Tea?</title></topic></t:topics>',
                  '<t:topics xmlns:t="urn:a"><t:topic><t:number>1</t:number><t:title>Tea?</t:title></t:topic>'
                  '</t:topics>', '<topics><topic xmlns="urn:a"><number>1</number><title>Tea?</title></topic></topics>',
                  '<topics xmlns="urn:x"><topic xmlns=""><number>1</number><title>Tea?</title></topic></topics>',
                  '<topics xmlns="urn:x"><topic><number>1</number><title xmlns="">Tea?</title></topic></topics>'):
        (tmp_path / "topics.xml").write_text(topic)  # the root's vocabulary, or the default one where written
        assert read_topics(tmp_path)[0].title == "Tea?"


def test_a_topics_file_beside_the_one_read_is_named_where_its_topics_differ(tmp_path, caplog, monkeypatch):
    """topics.xml won over a queries.jsonl of other topics without a word; TIREx writes queries.xml and
    queries.jsonl of the same topics, which says nothing. The other file never fails the run."""
    import logging

    import app.topics

    (tmp_path / "topics.xml").write_text("<topics><topic><number>1</number><title>Tea?</title></topic>"
                                         "<topic><number>2</number><title>Coffee?</title></topic></topics>")
    (tmp_path / "queries.jsonl").write_text('{"qid": "1", "query": "Tea?"}\n{"qid": "2", "query": "Coffee?"}\n')
    logging.getLogger("app.corpus").disabled = True  # as an application may have set it: kept
    try:
        assert len(read_topics(tmp_path)) == 2 and not caplog.records
        assert logging.getLogger("app.corpus").disabled
    finally:
        logging.getLogger("app.corpus").disabled = False
    for other in ('{"qid": "51", "query": "Tea?"}\n',  # other numbers; the same numbers, other titles (other years)
                  '{"qid": "1", "query": "Tenure?"}\n{"qid": "2", "query": "Coffee?"}\n'):
        (tmp_path / "queries.jsonl").write_text(other)
        caplog.clear()
        assert len(read_topics(tmp_path)) == 2
        assert caplog.messages == ["reading the topics of topics.xml; ignoring queries.jsonl, whose topics differ (1 "
                                   f"of its {other.count('qid')}, by number and title, are not in topics.xml, "
                                   f"{3 - other.count('qid')} of topics.xml's 2 not in it)"]
    (tmp_path / "queries.jsonl").write_text("not JSON\n")
    caplog.clear()
    assert len(read_topics(tmp_path)) == 2
    assert caplog.messages == ["reading the topics of topics.xml; ignoring queries.jsonl (" + str(tmp_path)
                               + "/queries.jsonl:1: not a JSON object (invalid JSON, or a line too long))"]

    def unreadable(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(app.topics, "_read_jsonl", unreadable)
    caplog.clear()
    assert len(read_topics(tmp_path)) == 2
    assert caplog.messages[0].startswith("reading the topics of topics.xml; ignoring queries.jsonl ([Errno 13]")


@pytest.mark.parametrize("text", [" " * 39_990 + "thé " * 3000, "e\u0301" * 40_000 + "x", "\n \n".join(["ab"] * 30_000),
                                  "\u00ad" * 39_999 + "tea " * 2000, "a" * 39_999 + " b" * 5000,
                                  " " * 34_999 + "x" * 5000 + "e\u0301 tea" * 10])
def test_a_long_field_is_cleaned_as_it_would_be_whole_up_to_the_cut(text):
    """Cleaned by growing prefixes (a 60 MB narrative cleaned whole took 800 MB), a field must read as the whole
    text cleaned up to MAX_TOPIC_CHARS, whatever the first prefix's end cuts: spaces, an accent, a word."""
    import unicodedata

    from app.records import clean_text
    from app.topics import MAX_TOPIC_CHARS, clean_field

    whole = unicodedata.normalize("NFC", " ".join(clean_text(text).split()))
    assert len(whole) > MAX_TOPIC_CHARS and clean_field(text)[:MAX_TOPIC_CHARS] == whole[:MAX_TOPIC_CHARS]


def test_a_huge_title_is_cut_and_said(tmp_path, caplog):
    from app.topics import MAX_TOPIC_CHARS

    (tmp_path / "topics.xml").write_text(f"<topics><topic><number>1</number><title>{'tea ' * 5000}</title>"
                                         "</topic></topics>")
    assert len(read_topics(tmp_path)[0].title) == MAX_TOPIC_CHARS
    assert "topic 1: title of over 5000 characters cut" in caplog.text


def test_a_lone_surrogate_in_a_query_becomes_a_replacement_character(tmp_path):
    (tmp_path / "queries.jsonl").write_text('{"qid": "1", "query": "tea \\ud800 coffee"}\n')
    assert read_topics(tmp_path)[0].title == "tea \ufffd coffee"


@pytest.mark.parametrize("make, problem", [
    (lambda path: path.mkdir(), "a directory, not a file"),
    (lambda path: path.symlink_to(path.parent / "gone.xml"), "which leads nowhere"),
])
def test_a_topics_file_that_is_no_file_is_named(tmp_path, make, problem):
    make(tmp_path / "topics.xml")
    with pytest.raises(ToucheError, match=f"topics.xml: .*{problem}"):
        read_topics(tmp_path)
    (tmp_path / "queries.jsonl").write_text('{"qid": "1", "query": "Tea or coffee?"}\n')  # was read, quietly
    with pytest.raises(ToucheError, match=f"topics.xml: .*{problem}"):
        read_topics(tmp_path)


def test_a_topics_file_is_found_here_or_in_the_input(tmp_path, monkeypatch, caplog):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "topics-task2.xml").write_text("<topics><topic><number>1</number><title>Cats or dogs?</title></topic>"
                                             "</topics>")
    assert topics_file(inputs, Path("topics-task2.xml")) == inputs / "topics-task2.xml"
    monkeypatch.chdir(inputs)
    assert topics_file(tmp_path, Path("topics-task2.xml")) == Path("topics-task2.xml")
    assert [t.title for t in read_topics(topics_file(tmp_path, Path("topics-task2.xml")))] == ["Cats or dogs?"]
    with pytest.raises(ToucheError, match=f"^--topics absent.xml: no such file, here or in {tmp_path}$"):
        topics_file(tmp_path, Path("absent.xml"))
    with pytest.raises(ToucheError, match="^--topics /absent/t.xml: no such file$"):
        topics_file(tmp_path, Path("/absent/t.xml"))
    with pytest.raises(ToucheError, match="^--topics /dev/null: not a regular file"):
        topics_file(tmp_path, Path("/dev/null"))
    with pytest.raises(ToucheError, match="^--topics in: a directory, not a file$"):
        topics_file(tmp_path, Path("in"))
    (inputs / "dangling.xml").symlink_to(tmp_path / "nowhere.xml")
    with pytest.raises(ToucheError, match="^--topics dangling.xml: a link to .*nowhere.xml, which leads nowhere$"):
        topics_file(tmp_path, Path("dangling.xml"))
    assert not caplog.records
    # The input's own topics file, passed over: said where its topics differ, as of two topics files in the input
    chosen = topics_file(inputs, Path("topics-task2.xml"))
    (inputs / "queries.xml").write_bytes(chosen.read_bytes())
    read_topics(chosen, beside=inputs)
    assert not caplog.records
    (inputs / "topics.xml").write_text("<topics><topic><number>9</number><title>Other?</title></topic></topics>")
    read_topics(chosen, beside=inputs)
    assert caplog.messages == ["reading the topics of topics-task2.xml; ignoring topics.xml, whose topics differ (1 of "
                               "its 1, by number and title, are not in topics-task2.xml, 1 of topics-task2.xml's 1 "
                               "not in it)"]
    with pytest.raises(ToucheError, match=r"t.xml.gz: a compressed topics file is not read"):
        (inputs / "t.xml.gz").write_bytes(b"")
        topics_file(inputs, Path("t.xml.gz"))


def test_a_compressed_topics_file_is_one_clear_line(tmp_path):
    (tmp_path / "queries.jsonl.gz").write_bytes(b"\x1f\x8b")
    with pytest.raises(ToucheError, match=r"a compressed topics file is not read; unpack it \(gunzip -k "):
        read_topics(tmp_path / "queries.jsonl.gz")


def test_no_topics_names_an_xml_file_it_could_read(tmp_path):
    (tmp_path / "b-topics.xml").write_text("<topics/>")
    (tmp_path / "a.xml").mkdir()  # a directory named so is no candidate
    with pytest.raises(ToucheError, match=r"expected one of .*; to read b-topics.xml, pass --topics b-topics.xml$"):
        read_topics(tmp_path)
    (tmp_path / "b-topics.xml").unlink()
    with pytest.raises(ToucheError, match=r"rerank.jsonl.gz$"):
        read_topics(tmp_path)


def test_beir_queries_are_topics(tmp_path):
    """BEIR's queries.jsonl (`_id`, `text`; webis-touche2020 keeps description and narrative in `metadata`) was
    "expected a JSON object with a 'qid' and a 'query'"."""
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "1", "text": "Should teachers get tenure?", "metadata": {"description": "A user asks.", '
        '"narrative": "Relevant: arguments."}}\n{"_id": "2", "text": "Is vaping good?", "metadata": {}}\n')
    topics = read_topics(tmp_path)
    assert [(t.number, t.title, t.description, t.narrative) for t in topics] == [
        ("1", "Should teachers get tenure?", "A user asks.", "Relevant: arguments."), ("2", "Is vaping good?", "", "")]


def test_an_ir_datasets_export_of_queries_is_topics(tmp_path):
    """`ir_datasets export ... queries --format jsonl` writes `query_id` and the query's own fields (BEIR's webis-
    touche2020: text, description, narrative; Touché's comparative topics: title, objects): it was "expected a JSON
    object with a 'qid' and a 'query'"."""
    (tmp_path / "queries.jsonl").write_text(
        '{"query_id": "1", "text": "Should teachers get tenure?", "description": "A user asks.", "narrative": "N."}\n'
        '{"query_id": "2", "title": "Tea or coffee?", "objects": ["tea", "coffee"], "narrative": ""}\n')
    topics = read_topics(tmp_path)
    assert [(t.number, t.title, t.description, t.narrative, t.objects) for t in topics] == [
        ("1", "Should teachers get tenure?", "A user asks.", "N.", None),
        ("2", "Tea or coffee?", "", "", ("tea", "coffee"))]


def test_a_topics_file_of_gigabytes_is_one_line_naming_it(tmp_path):
    """A sparse 40 GB topics.xml was read whole: "out of memory", naming no file."""
    with (tmp_path / "topics.xml").open("wb") as out:
        out.truncate(40 << 30)
    with pytest.raises(ToucheError, match=r"topics.xml: more than 64 MB of topics"):
        read_topics(tmp_path / "topics.xml")


def test_a_topic_field_is_read_composed_as_documents_are():
    """BM25 and the stance features match topic words against composed (NFC) documents."""
    from app.topics import clean_field

    assert clean_field("cafe\u0301  vs\u00a0the\u0301") == "caf\u00e9 vs th\u00e9"


def test_objects_that_name_no_two_things_are_said_to_be_ignored(tmp_path: Path, caplog):
    (tmp_path / "queries.jsonl").write_text('{"qid": "1", "query": "Tea or tea?", "objects": "tea, tea"}\n')
    assert read_topics(tmp_path)[0].objects is None
    assert "topic 1: objects 'tea, tea' do not name two objects; ignored" in caplog.text


@pytest.mark.parametrize("length, cut", [(5000, False), (5001, True)])
def test_a_field_is_cut_past_the_bound_not_at_it(tmp_path: Path, caplog, length, cut):
    (tmp_path / "queries.jsonl").write_text(json.dumps({"qid": "1", "query": "Tea?", "narrative": "n" * length}) + "\n")
    assert len(read_topics(tmp_path)[0].narrative) == min(length, 5000)
    assert ("narrative of over 5000 characters cut" in caplog.text) == cut
