import gzip
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from app.corpus import (MAX_DIGITS, MAX_JSON_DEPTH, CorpusSource, JsonGuard, _argument_document, choose_source,
                         detect_corpus, read_documents, read_rerank)
from app.errors import ToucheError
from app.records import Document

# A topic ranked by order: the first-stage scores `records.scores_or_order` gives it.
ORDER = [1 / (1 + position / 100) for position in range(10)]


def test_detects_each_layout(fixtures, tmp_path):
    assert detect_corpus(fixtures / "argsme").kind == "argsme"
    assert detect_corpus(fixtures / "passages").kind == "jsonl"
    assert detect_corpus(fixtures / "rerank").kind == "rerank"
    assert detect_corpus(tmp_path) is None
    (tmp_path / "documents.jsonl.gz").write_bytes(gzip.compress(b'{"docno": "d1", "text": "t"}\n'))
    source = detect_corpus(tmp_path)
    assert (source.kind, source.id_field, source.text_field) == ("jsonl", "docno", "text")


def test_argsme_text_is_conclusion_plus_premises_with_stance(fixtures, caplog):
    with caplog.at_level(logging.WARNING):
        documents = list(read_documents(detect_corpus(fixtures / "argsme")))
    assert len(documents) == 9  # an empty argument and a duplicate id are skipped
    first = documents[0]
    assert first.text.startswith("School uniforms should be mandatory Uniforms reduce peer pressure")
    assert [d.stance for d in documents[:2]] == ["PRO", "CON"]
    assert "skipped 2 records (1 duplicate id, 1 empty text)" in caplog.text


def test_argsme_stance_is_kept_with_the_conclusion_it_is_toward(tmp_path):
    premise = {"text": "Tenure protects academic freedom.", "stance": "CON"}
    arguments = [{"id": "a1", "conclusion": " Tenure should be abolished ", "premises": [premise]},
                 {"id": "a2", "conclusion": "", "premises": [premise]},
                 {"id": "a3", "conclusion": "Tenure", "premises": [dict(premise, stance="maybe")]},
                 {"id": "a4", "conclusion": "Tenure", "premises": [dict(premise, stance=" pro")]},
                 {"id": "a5", "conclusion": "Tenure", "premises": [dict(premise, stance=1)]}]
    (tmp_path / "args-me.json").write_text(json.dumps({"arguments": arguments}))
    documents = list(read_documents(detect_corpus(tmp_path)))
    assert [(d.stance, d.stance_target) for d in documents] == [("CON", "Tenure should be abolished"),
                                                                (None, None), (None, None), ("PRO", "Tenure"),
                                                                (None, None)]


def test_argsme_per_portal_files(fixtures, tmp_path):
    arguments = json.loads((fixtures / "argsme" / "args-me.json").read_text())["arguments"]
    json.dump({"arguments": arguments[:4]}, (tmp_path / "debateorg.json").open("w"))
    json.dump({"arguments": arguments[4:8]}, (tmp_path / "idebate.json").open("w"))
    source = detect_corpus(tmp_path)
    assert source.kind == "argsme" and len(source.paths) == 2
    assert len(list(read_documents(source))) == 8


@pytest.mark.parametrize("shape", [lambda arguments: {"arguments": {a["id"]: a for a in arguments}},
                                   lambda arguments: {"Arguments": arguments}])
def test_an_argsme_portal_file_of_another_shape_is_named(fixtures, tmp_path, caplog, shape):
    """Valid JSON of another shape gave none of its arguments, and only "100 documents in debateorg.json,
    debatewise.json" said so."""
    arguments = json.loads((fixtures / "argsme" / "args-me.json").read_text())["arguments"]
    json.dump({"arguments": arguments[:4]}, (tmp_path / "debateorg.json").open("w"))
    json.dump(shape(arguments[4:8]), (tmp_path / "debatewise.json").open("w"))
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert len(list(read_documents(detect_corpus(tmp_path)))) == 4
        assert len(list(read_documents(detect_corpus(tmp_path), report=False))) == 4  # a run's second pass: unsaid
    assert [record.getMessage() for record in caplog.records] == [
        'debateorg.json, debatewise.json: no arguments read from debatewise.json (an args.me file holds them as '
        '{"arguments": [...]})']


@pytest.mark.parametrize("write", [
    lambda arguments: json.dumps(arguments, indent=1),  # the list alone, as `jq .arguments` writes it
    lambda arguments: "\n".join(json.dumps(argument) for argument in arguments) + "\n",  # JSON lines
    lambda arguments: "".join(json.dumps(argument) for argument in arguments),  # one after another
])
def test_argsme_files_of_the_other_shapes_arguments_take_are_read(fixtures, tmp_path, write):
    """A portal file holding the list of arguments alone, or its arguments one a line, beside one as args.me writes
    it: a third of a corpus went with one warning, and such a file alone was "no usable documents"."""
    arguments = json.loads((fixtures / "argsme" / "args-me.json").read_text())["arguments"]
    json.dump({"arguments": arguments[:4]}, (tmp_path / "debateorg.json").open("w"))
    (tmp_path / "idebate.json").write_text(write(arguments[4:8]))
    read = list(read_documents(detect_corpus(tmp_path)))
    assert [document.doc_id for document in read] == [argument["id"] for argument in arguments[:8]]
    assert read == list(read_documents(CorpusSource("argsme", (tmp_path / "debateorg.json",)))) + [
        _argument_document(argument) for argument in arguments[4:8]]


@pytest.mark.parametrize("write", [
    lambda arguments: json.dumps(arguments),
    lambda arguments: "\n".join(json.dumps(argument) for argument in arguments) + "\n",
])
def test_a_damaged_argument_of_the_other_shapes_costs_itself(tmp_path, write, caplog):
    """Damage within a list of arguments, or in a line of arguments one a line, the first too, is resumed after as in
    args.me's own shape: the argument is skipped and counted."""
    arguments = [{"id": f"a{i}", "conclusion": "Tea", "premises": [{"text": f"tea is good {i}", "stance": "PRO"}]}
                 for i in range(6)]
    text = write(arguments).replace('"tea is good 2"', '"tea is "good" 2"').replace('"tea is good 0"', '"tea 0" 1')
    (tmp_path / "args-me.json").write_text(text)
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        read = list(read_documents(detect_corpus(tmp_path)))
    assert [document.doc_id for document in read] == ["a1", "a3", "a4", "a5"]
    assert "skipped 2 records (2 invalid JSON arguments)" in caplog.text


@pytest.mark.parametrize("last", ["hello", "]", "{not json"])
def test_garbage_after_the_last_of_arguments_one_a_line_costs_no_argument(tmp_path, caplog, last):
    """It ended the run ("and no argument starts after it"), where the same line between arguments was skipped."""
    arguments = [{"id": f"a{i}", "conclusion": "Tea", "premises": [{"text": f"tea {i}"}]} for i in range(3)]
    (tmp_path / "args-me.json").write_text("".join(json.dumps(a) + "\n" for a in arguments) + last + "\n")
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["a0", "a1", "a2"]
    assert "invalid JSON after argument 'a2'" in caplog.text


def test_a_json_list_of_records_without_premises_is_read_by_their_text_field(tmp_path):
    """A list of {"id", "text"} was "2 empty texts" and "no usable documents"; with a conclusion, the conclusion
    alone."""
    records = [{"id": "p1", "text": "Tea is good."}, {"id": "p2", "conclusion": "Coffee", "contents": "It wakes."}]
    (tmp_path / "docs.json").write_text(json.dumps(records))
    read = list(read_documents(detect_corpus(tmp_path, tmp_path / "docs.json")))
    assert [(d.doc_id, d.text) for d in read] == [("p1", "Tea is good."), ("p2", "Coffee It wakes.")]


def test_a_truncated_argument_list_is_an_error(tmp_path):
    """A list of arguments cut short is said as args.me's own shape cut short is: a partial corpus gives another run."""
    arguments = [{"id": f"a{i}", "conclusion": "Tea", "premises": [{"text": f"tea {i}"}]} for i in range(3)]
    (tmp_path / "args-me.json").write_text(json.dumps(arguments)[:-30])
    with pytest.raises(ToucheError, match="truncated: the JSON ends after argument 'a1'"):
        list(read_documents(detect_corpus(tmp_path)))


@pytest.mark.parametrize("name", ["documents.jsonl", "passages.jsonl.gz", "arguments.jsonl"])
def test_argsme_arguments_one_a_line_keep_their_premises_and_stance(fixtures, tmp_path, name):
    """args.me's arguments as JSON lines were read as their conclusions alone (22 characters on average), premises
    and stances dropped with nothing said; under another name `--corpus` refused them."""
    arguments = json.loads((fixtures / "argsme" / "args-me.json").read_text())["arguments"]
    data = "".join(json.dumps(argument) + "\n" for argument in arguments).encode()
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    source = detect_corpus(tmp_path, tmp_path / name if name == "arguments.jsonl" else None)
    read = list(read_documents(source))
    assert read == list(read_documents(CorpusSource("argsme", (fixtures / "argsme" / "args-me.json",))))
    assert len(read) == 9 and all(document.stance in ("PRO", "CON") for document in read)


def test_argsme_ids_a_run_can_hold_are_read_and_the_others_said(tmp_path, caplog):
    """A number is an id as in JSON lines (it was dropped as "malformed"); an id with a space is no run file's, and
    the warning says which was wrong."""
    arguments = [{"id": doc_id, "conclusion": "Tea", "premises": [{"text": f"tea {i}", "stance": "PRO"}]}
                 for i, doc_id in enumerate([123, "a b", None, "S1-A2"])]
    (tmp_path / "args-me.json").write_text(json.dumps({"arguments": arguments + [7]}))
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["123", "S1-A2"]
    assert ("skipped 3 records (1 argument with an id no run can hold, 1 argument without an id, 1 malformed "
            "argument)") in caplog.text


def test_argsme_files_gzipped_are_found_by_their_names(fixtures, tmp_path, caplog):
    """`args-me.json.gz` was no corpus ("expected args.me JSON, ..."); beside its unpacked copy the copy is read, and
    the gzipped one is said to be ignored (it was passed over unsaid, where `passages.jsonl.gz` is named)."""
    arguments = json.loads((fixtures / "argsme" / "args-me.json").read_text())["arguments"]
    (tmp_path / "debateorg.json.gz").write_bytes(gzip.compress(json.dumps({"arguments": arguments[:4]}).encode()))
    (tmp_path / "idebate.json").write_text(json.dumps({"arguments": arguments[4:]}))
    source = detect_corpus(tmp_path)
    assert [path.name for path in source.paths] == ["debateorg.json.gz", "idebate.json"]
    assert len(list(read_documents(source))) == 9  # the fixture's arguments but a duplicate id and an empty text
    assert "ignoring" not in caplog.text
    (tmp_path / "debateorg.json").write_text(json.dumps({"arguments": arguments[:4]}))
    assert [path.name for path in detect_corpus(tmp_path).paths] == ["debateorg.json", "idebate.json"]
    assert "ranking debateorg.json, idebate.json (precedence); ignoring debateorg.json.gz" in caplog.text
    assert detect_corpus(tmp_path, tmp_path / "debateorg.json.gz").paths == (tmp_path / "debateorg.json.gz",)
    assert caplog.text.count("ignoring") == 2
    # the file --corpus names is not among those ignored, whichever group it came in
    assert "ranking debateorg.json.gz (--corpus); ignoring debateorg.json, idebate.json\n" in caplog.text
    caplog.clear()
    detect_corpus(tmp_path, tmp_path / "idebate.json")
    assert "ranking idebate.json (--corpus); ignoring debateorg.json, debateorg.json.gz\n" in caplog.text


def test_argsme_premises_of_other_exporters_shapes_keep_their_text(tmp_path):
    """A premise as a string, one premise not in a list, a list of strings, a text as a list of sentences: the
    arguments were read as their conclusion alone, with nothing said."""
    arguments = [{"id": "A1", "conclusion": "Abortion", "premises": "It should be legal."},
                 {"id": "A2", "conclusion": "Abortion", "premises": {"text": "It should be banned.", "stance": "CON"}},
                 {"id": "A3", "conclusion": "Abortion", "premises": ["A fetus cannot feel pain.", 3]},
                 {"id": "A4", "conclusion": "Abortion", "premises": [{"text": ["Women decide.", "Always."],
                                                                      "stance": "PRO"}]}]
    (tmp_path / "args-me.json").write_text(json.dumps({"arguments": arguments}))
    assert [(d.text, d.stance) for d in read_documents(detect_corpus(tmp_path))] == [
        ("Abortion It should be legal.", None), ("Abortion It should be banned.", "CON"),
        ("Abortion A fetus cannot feel pain.", None), ("Abortion Women decide. Always.", "PRO")]


def test_passages_skip_bad_lines_duplicates_and_empty_texts(fixtures, caplog):
    with caplog.at_level(logging.WARNING):
        documents = list(read_documents(detect_corpus(fixtures / "passages")))
    assert len(documents) == 11
    assert len({d.doc_id for d in documents}) == 11
    assert "skipped 3 records (1 bad line, 1 duplicate id, 1 empty text)" in caplog.text


def test_a_text_of_nothing_visible_is_an_empty_text(tmp_path, caplog):
    lines = [{"id": "a", "contents": "\u200b \ufeff\u2060"}, {"id": "b", "contents": "A text."}]
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["b"]
    assert "skipped 1 record (1 empty text)" in caplog.text
    rerank = [{"qid": "1", "query": "q", "docno": docno, "text": text, "rank": rank, "score": 1.0 / rank}
              for rank, (docno, text) in enumerate([("a", "\u200b"), ("b", "A text.")], 1)]
    with gzip.open(tmp_path / "rerank.jsonl.gz", "wt") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in rerank))
    (tmp_path / "passages.jsonl").unlink()
    assert [c.doc.doc_id for c in read_rerank(detect_corpus(tmp_path))["1"]] == ["b"]


def test_a_line_past_the_bound_is_a_bad_line_read_past_in_pieces(tmp_path, monkeypatch, caplog):
    """One line of gigabytes (a few MB gzipped) must not be read into memory whole."""
    import app.corpus as corpus

    monkeypatch.setattr(corpus, "MAX_LINE_BYTES", 1000)
    fits = json.dumps({"id": "fits", "contents": "x" * (1000 - 31)}) + "\n"
    assert len(fits) == 1000
    lines = [json.dumps({"id": "a", "contents": "A text."}) + "\n",
             json.dumps({"id": "long", "contents": "word " * 2000}) + "\n", fits,
             json.dumps({"id": "b", "contents": "B text."}) + "\n"]
    with gzip.open(tmp_path / "passages.jsonl.gz", "wt") as handle:
        handle.write("".join(lines))
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["a", "fits", "b"]
    assert "skipped 1 record (1 bad line)" in caplog.text


def test_a_line_of_more_brackets_than_the_bound_is_a_bad_line(tmp_path, monkeypatch, caplog):
    """Each bracket is a list or dict to json.loads: 64 MB of them took 3.3 GB a line."""
    import app.corpus as corpus

    monkeypatch.setattr(corpus, "MAX_LINE_CONTAINERS", 50)
    lines = [{"id": "a", "contents": "A text [with] {brackets}."}, {"id": "b", "contents": "B", "x": [[]] * 60},
             {"id": "c", "contents": "C text."}]
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["a", "c"]
    assert "skipped 1 record (1 bad line)" in caplog.text


def test_gzipped_passages(fixtures, tmp_path):
    with (fixtures / "passages" / "passages.jsonl").open("rb") as plain, \
            gzip.open(tmp_path / "passages.jsonl.gz", "wb") as packed:
        shutil.copyfileobj(plain, packed)
    assert len(list(read_documents(detect_corpus(tmp_path)))) == 11


def test_nothing_usable_is_an_error(tmp_path):
    (tmp_path / "passages.jsonl").write_text('{"id": "a", "contents": ""}\nnot json\n')
    with pytest.raises(ToucheError, match="no usable documents$"):
        list(read_documents(detect_corpus(tmp_path)))
    for empty in ("", "\n\n  \n"):  # "no usable documents" said nothing of why
        (tmp_path / "passages.jsonl").write_text(empty)
        with pytest.raises(ToucheError, match=r"^passages.jsonl: no usable documents \(it holds no record\)$"):
            list(read_documents(detect_corpus(tmp_path)))


def test_broken_argsme_json_is_an_error(tmp_path):
    (tmp_path / "args-me.json").write_text('{"arguments": [{"id": "x", "conclusion": "c", ')
    with pytest.raises(ToucheError, match="truncated: the JSON ends before its first argument"):
        list(read_documents(detect_corpus(tmp_path)))


def test_an_empty_argsme_file_is_named_empty_not_truncated(tmp_path):
    (tmp_path / "args-me.json").write_text("")
    with pytest.raises(ToucheError, match="args-me.json: an empty file, not args.me JSON"):
        list(read_documents(detect_corpus(tmp_path)))


def test_a_raw_control_character_in_an_argsme_string_costs_nothing(tmp_path):
    """JSON forbids them raw in a string; a careless exporter writes them, and one must not cost the corpus."""
    (tmp_path / "args-me.json").write_bytes(b'{"arguments": [{"id": "a", "conclusion": "c", "premises": '
                                            b'[{"text": "tab\there nul\x00 cr\r", "stance": "PRO"}]},\n'
                                            b'{"id": "b", "conclusion": "d", "premises": [{"text": "fine"}]}]}')
    documents = list(read_documents(detect_corpus(tmp_path)))
    assert [(d.doc_id, d.text) for d in documents] == [("a", "c tab here nul cr"), ("b", "d fine")]


def _argsme(arguments: list[str]) -> bytes:
    return ('{"arguments": [' + ",\n".join(arguments) + "]}").encode()


def _argument(number: int, extra: str = "") -> str:
    """An args.me argument as the real files write one (premises, context, id, conclusion), JSON text."""
    return (f'{{"premises": [{{"text": "premise {number} {extra and "pad " * 40}", "stance": "PRO"}}], '
            f'"context": {{"sourceId": "s{number}", "previousArgumentInSourceId": "a{number - 1}"}}, '
            f'"id": "a{number}", "conclusion": "conclusion {number}"{extra}}}')


def _read_ids(tmp_path, raw: bytes) -> list[str]:
    (tmp_path / "args-me.json").write_bytes(raw)
    return [document.doc_id for document in read_documents(detect_corpus(tmp_path))]


@pytest.mark.parametrize("damage, lost", [
    ({3: ', "score": NaN'}, {3}),  # a value JSON has not
    ({3: ', "score": NaN', 4: ', "x": tru'}, {3, 4}),  # two in a row
    ({19: ', "score": NaN'}, {19}),  # the last
    ({3: ', "text": "a "quote" in it"'}, {3}),  # an unescaped quote
    ({3: ', "stance" "PRO"'}, {3}),  # a colon missing
    ({3: ', "stance": "PRO"}]'}, set()),  # closed early: the arguments after it read as another file's
])
def test_a_damaged_argsme_argument_costs_that_argument_not_the_corpus(tmp_path, caplog, damage, lost):
    """The parse resumes at the next argument's start; the arguments read again from there are not read twice."""
    arguments = [_argument(number, damage.get(number, ', "pad": 1')) for number in range(20)]
    with caplog.at_level(logging.WARNING):
        ids = _read_ids(tmp_path, _argsme(arguments))
    assert ids == [f"a{number}" for number in range(20) if number not in lost]
    assert f"invalid JSON after argument 'a{min(lost or {4}) - 1}' (" in caplog.text
    assert (f"args-me.json: skipped {len(lost)} record" in caplog.text) == bool(lost)
    assert len(caplog.records) == 1  # one line with the corpus's other defects


def test_a_damaged_argsme_argument_is_said_once_though_a_run_reads_the_file_twice(tmp_path, caplog):
    """The index's pass and the pass keeping the candidates' texts each warned of the damage."""
    (tmp_path / "args-me.json").write_bytes(_argsme([_argument(number, ', "score": NaN' if number == 3 else "")
                                                     for number in range(6)]))
    source = detect_corpus(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert len(list(read_documents(source))) == len(list(read_documents(source, report=False))) == 5
    assert caplog.text.count("skipped to the next argument") == 1


def test_a_damaged_argsme_argument_is_skipped_far_into_a_large_file(tmp_path, caplog):
    """Past the bytes ijson reads at once (64 kB) and those kept to resume (4 MB), damage in a 10 MB argument."""
    arguments = [_argument(number, f', "pad": "{"x" * 2_000}"') for number in range(3_000)]
    arguments[1_000] = arguments[1_000].replace('"stance": "PRO"', '"stance": PRO')
    arguments[2_000] = arguments[2_000].replace('"conclusion"', f'"conclusion" "{"y" * 10_000_000}"')
    with caplog.at_level(logging.WARNING):
        ids = _read_ids(tmp_path, _argsme(arguments))
    assert ids == [f"a{number}" for number in range(3_000) if number not in (1_000, 2_000)]
    assert "skipped 2 records (2 invalid JSON arguments)" in caplog.text


def test_argsme_files_joined_are_read_whole(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        ids = _read_ids(tmp_path, _argsme([_argument(0), _argument(1)]) + b"\n" + _argsme([_argument(2)]) + b"\n")
    assert ids == ["a0", "a1", "a2"]
    assert "trailing garbage); skipped to the next argument" in caplog.text and "skipped 1 record" not in caplog.text


def test_argsme_damage_that_nests_the_arguments_after_it_costs_none_of_them(tmp_path, caplog):
    """One "[" more before an argument makes the rest of the file one list, which fails only at the file's end."""
    raw = _argsme([_argument(number) for number in range(500)])
    at = raw.index(b'{"premises"', raw.index(b'"a100"'))
    with caplog.at_level(logging.WARNING):
        ids = _read_ids(tmp_path, raw[:at] + b"[" + raw[at:])
    assert ids == [f"a{number}" for number in range(500)] and " record" not in caplog.text


def test_argsme_arguments_that_damage_made_premises_are_read(tmp_path):
    """A "]}" lost after an argument's premises takes the arguments after it in as premises, and may still parse."""
    arguments = [_argument(number) for number in range(20)]
    swallowing = '{"premises": [{"text": "premise 5"}, ' + ", ".join(arguments[6:]) + '], "id": "a5", "conclusion": "c"}'
    assert _read_ids(tmp_path, _argsme(arguments[:5] + [swallowing])) == [f"a{number}" for number in range(20)]


def test_argsme_arguments_resume_at_the_key_they_begin_with(tmp_path):
    """json.dumps(sort_keys=True) begins each argument with "aspects" or "conclusion", not "premises"."""
    arguments = [json.loads(_argument(number)) | {"aspects": [{"name": "x", "weight": 1}]} for number in range(50)]
    raw = json.dumps({"arguments": arguments}, sort_keys=True).replace('"conclusion 20"', '"conclusion 20" 1')
    assert _read_ids(tmp_path, raw.encode()) == [f"a{number}" for number in range(50) if number != 20]


def test_argsme_damage_in_a_text_of_brackets_is_no_deep_nesting(tmp_path):
    """A stray quote turns strings and the rest for the depth count; the brackets of a later text must not count."""
    arguments = [_argument(number) for number in range(100)]
    arguments[60] = arguments[60].replace("premise 60", "see [" * 1_001)
    arguments[10] = arguments[10].replace('"conclusion 10"', '"conclusion 10""')
    assert _read_ids(tmp_path, _argsme(arguments)) == [f"a{number}" for number in range(100) if number != 10]


def test_argsme_arguments_without_an_id_are_counted_once(tmp_path, caplog):
    arguments = [_argument(number) for number in range(300)]
    arguments[200] = arguments[200].replace('"id": "a200", ', "")
    arguments[201] = arguments[201].replace('"conclusion 201"', '"conclusion 201", "score": NaN')
    with caplog.at_level(logging.WARNING):
        ids = _read_ids(tmp_path, _argsme(arguments))
    assert len(ids) == 298 and "skipped 2 records (1 argument without an id, 1 invalid JSON argument)" in caplog.text


@pytest.mark.parametrize("cut", [b'\\', b'\\u00'])
def test_argsme_cut_within_an_escape_is_truncated_not_read_as_whole(tmp_path, cut):
    """yajl calls such an end a lexical error, not the premature EOF of other cuts."""
    raw = _argsme([_argument(number, ', "quote": "a \\" \\u00e9"') for number in range(50)])
    end = raw.index(cut, raw.index(b'"a25"')) + len(cut)
    with pytest.raises(ToucheError, match="after argument 'a24' .*no argument starts after it"):
        _read_ids(tmp_path, raw[:end])


def test_argsme_nesting_made_of_argument_starts_is_still_too_deep(tmp_path):
    """Depth counts what the parser reads, from where it starts: objects that begin as arguments do ("{"id": x,
    "premises": [" 20,000 times took ijson 3.8 GB when the count restarted at each)."""
    raw = '{"arguments": [' + '{"id": "x", "premises": [' * 3_000 + "1" + "]}" * 3_000 + "]}"
    with pytest.raises(ToucheError, match=f"nested more than {MAX_JSON_DEPTH} levels deep"):
        _read_ids(tmp_path, raw.encode())


def test_an_argsme_argument_without_id_too_deep_to_write_is_malformed_not_a_crash(tmp_path, caplog):
    deep = '{"premises": ' + "[" * 990 + "]" * 990 + ', "conclusion": "c"}'
    with caplog.at_level(logging.WARNING):
        ids = _read_ids(tmp_path, _argsme([_argument(0), deep, _argument(1, ', "x": NaN'), _argument(2)]))
    assert ids == ["a0", "a2"] and "(1 argument without an id, 1 invalid JSON argument)" in caplog.text


@pytest.mark.parametrize("bomb", ["string", "premises"])
def test_an_argsme_argument_past_the_bound_is_passed_over_as_damage(tmp_path, caplog, monkeypatch, bomb):
    """One 128 MB premise (a 196 kB gzip) took ijson 41 s to build, 513 MB over 10 minutes; 6 million premises in
    one argument (a 450 kB gzip) 2.6 GB. Here the bound is 1 MB; at 16 MB the two took 1.6 s and 263 MB."""
    from app.corpus import _Resumable

    monkeypatch.setattr(_Resumable, "MAX_ARGUMENT", 1 << 20)
    big = ('{"premises": [{"text": "' + "tenure " * 300_000 + '", "stance": "PRO"}], "id": "big", "conclusion": "c"}'
           if bomb == "string" else
           '{"premises": [' + '{"text": "t", "stance": "PRO"},' * 60_000 + '{"text": "t"}], "id": "big"}')
    with caplog.at_level(logging.WARNING):
        assert _read_ids(tmp_path, _argsme([_argument(0), big, _argument(1)])) == ["a0", "a1"]
    assert "skipped 1 record (1 invalid JSON argument)" in caplog.text and "(an argument over 1 MB)" in caplog.text



def test_json_around_the_arguments_list_is_no_argument_past_the_bound(tmp_path, caplog, monkeypatch):
    """2 MB of metadata before or after args.me's list (here past a bound of 1 MB) counted toward the argument
    after it: the file was refused, or its end read as damage. One string past the bound stays bounded (ijson
    reads it whole, in time that grows with the square of its length: 200 MB, 90 s)."""
    from app.corpus import _Resumable

    monkeypatch.setattr(_Resumable, "MAX_ARGUMENT", 1 << 20)
    meta = '"meta": {' + ", ".join(f'"note {number}": "' + "x " * 50 + '"' for number in range(20_000)) + "}"
    arguments = ",\n".join(_argument(number) for number in range(3))
    for raw in (f'{{{meta}, "arguments": [{arguments}]}}', f'{{"arguments": [{arguments}], {meta}}}'):
        with caplog.at_level(logging.WARNING):
            assert _read_ids(tmp_path, raw.encode()) == ["a0", "a1", "a2"]
        assert "over 1 MB" not in caplog.text
    one_string = '{"meta": "' + "x " * (1 << 20) + f'", "arguments": [{arguments}]}}'
    with pytest.raises(ToucheError, match=r"an argument over 1 MB"):
        _read_ids(tmp_path, one_string.encode())


def test_argsme_followed_by_what_holds_more_arguments_unread_is_an_error(tmp_path):
    """JSON lines after a whole args.me file: their arguments would be lost without a word."""
    lines = "\n".join(json.dumps(json.loads(_argument(number))) for number in range(10, 20))
    with pytest.raises(ToucheError, match="trailing garbage.*no argument starts after it"):
        _read_ids(tmp_path, _argsme([_argument(0)]) + b"\n" + lines.replace('{"premises"', '{"text": 1, "premises"')
                  .encode())


def test_argsme_damaged_in_its_first_argument_costs_that_argument(tmp_path, caplog):
    """A file that opens as args.me does ({"arguments": [ and an argument's start): one bad value in its first
    argument lost the whole corpus, where the same in its sixth cost that one."""
    with caplog.at_level(logging.WARNING):
        assert _read_ids(tmp_path, _argsme([_argument(0, ', "score": NaN'), _argument(1)])) == ["a1"]
    assert ("args-me.json: skipped 1 record (1 invalid JSON argument); invalid JSON in its first argument (lexical "
            "error") in caplog.text


def test_argsme_damage_after_an_argument_without_an_id_is_placed_there(tmp_path, caplog):
    """It was said to lie "in its first argument" (a fuzz of the resume, /tmp/s60/fuzz)."""
    raw = _argsme(['{"premises": [], "conclusion": "no id"}', _argument(1, ', "score": NaN'), _argument(2)])
    with caplog.at_level(logging.WARNING):
        assert _read_ids(tmp_path, raw) == ["a2"]
    assert "invalid JSON after an argument without an id (lexical error: invalid char in json text.)" in caplog.text


def test_argsme_damage_among_multibyte_characters_is_said_in_words(tmp_path):
    """ijson's C backend gives the text around the error as bytes, cut within a character: the line showed
    b'lexical error: ...\\xa9\\xc3...'."""
    raw = ('{"arguments": [{"premises' + "é" * 21 + ': 1, "id": "a0"}]}').encode()
    with pytest.raises(ToucheError) as raised:
        _read_ids(tmp_path, raw)
    assert str(raised.value).endswith("not an args.me JSON file (lexical error: invalid char in json text.)")


@pytest.mark.parametrize("opening", [b'{"args": [', b'{"arguments": {"a": 1}, "more": ['])
def test_a_file_that_does_not_open_as_argsme_damaged_before_an_argument_is_an_error(tmp_path, opening):
    """Nothing read yet, and the file opens otherwise: what it holds cannot be told."""
    raw = opening + _argument(0, ', "score": NaN').encode() + b", " + _argument(1).encode() + b"]}"
    with pytest.raises(ToucheError, match=r"args-me.json: invalid JSON before its first argument, or not an args.me "
                                          r"JSON file \(lexical error"):
        _read_ids(tmp_path, raw)


def test_argsme_json_nested_past_the_limit_is_an_error_before_ijson_spends_the_memory(tmp_path):
    """ijson's memory grows with the square of the depth: 100,000 levels in a 200 kB file took 24 GB."""
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "args-me.json").write_text('{"arguments": [{"id": "a", "conclusion": "c", "premises": '
                                           f'[{{"text": "t", "stance": "PRO"}}], "context": {deep}}}]}}')
    with pytest.raises(ToucheError, match=r"args-me\.json: JSON nested more than 1000 levels deep; not an args\.me "
                                          r"JSON file"):
        list(read_documents(detect_corpus(tmp_path)))
    shallow = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH  # inside "arguments": [{"context": ...}]: 3 levels more
    (tmp_path / "args-me.json").write_text('{"arguments": [{"id": "a", "conclusion": "c [{", "premises": '
                                           f'[{{"text": "t", "stance": "PRO"}}], "context": {shallow[3:-3]}}}]}}')
    assert [document.doc_id for document in read_documents(detect_corpus(tmp_path))] == ["a"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_json_guard_counts_depth_past_strings_and_escapes_and_shortens_digit_runs_across_chunks(chunk):
    value = {"a\\": ['x"[[', {"\\\"{": [["]]}}", []]], "b": "\\"}], "c": [[[[]]]], "n": [12, 34.5]}
    data = json.dumps(value, ensure_ascii=False).encode().replace(b"34.5", b"3" * 5000 + b".5" + b"9" * 5000)
    data += b"7" * MAX_DIGITS  # at the very end: held back, then given whole
    guard, out = JsonGuard(Path("x.json")), b""
    for start in range(0, len(data), chunk):
        out += (fed := guard.feed(data[start:start + chunk]))
        assert guard.admit(fed) == len(fed)
    out += (fed := guard.feed(b"", final=True))
    assert guard.admit(fed) == len(fed)
    assert (guard.deepest, guard.depth) == (6, 0)
    assert out == data.replace(b"3" * 5000 + b".5" + b"9" * 5000, b"0.0")  # the runs "333..." and "5999..."


def test_rerank_file_groups_candidates_by_query(fixtures):
    candidates = read_rerank(detect_corpus(fixtures / "rerank"))
    assert list(candidates) == ["11", "12", "13"]
    assert [c.doc.doc_id for c in candidates["13"]] == ["p-tea-1", "p-tea-2", "p-tea-3"]
    assert candidates["13"][0].score == 9.0


def test_a_document_keeps_its_text_under_each_query(tmp_path):
    lines = ['{"qid": "1", "query": "q", "docno": "X", "text": "cats purr", "score": 2}',
             '{"qid": "2", "query": "r", "docno": "X", "text": "museum hours", "score": 1}',
             '{"qid": "2", "query": "r", "docno": "Y", "text": "same text", "score": 1}',
             '{"qid": "1", "query": "q", "docno": "Y", "text": "same text", "score": 1}']
    (tmp_path / "rerank.jsonl").write_text("\n".join(lines) + "\n")
    candidates = read_rerank(detect_corpus(tmp_path))
    assert [(c.doc.doc_id, c.doc.text) for c in candidates["1"]] == [("X", "cats purr"), ("Y", "same text")]
    assert [(c.doc.doc_id, c.doc.text) for c in candidates["2"]] == [("X", "museum hours"), ("Y", "same text")]


@pytest.mark.parametrize("scores", ["all", "one missing", "ranks"])
def test_rerank_keeps_the_best_per_query_while_reading(tmp_path, scores):
    """A 7.6 MB rerank.jsonl.gz of 6 GB was held whole (6.1 GB); now only what --candidates lets through is kept,
    chosen as the whole file would order it (best score first, ties in file order, or file order)."""
    rng = np.random.default_rng(3)
    lines = [{"qid": str(q), "query": "q", "docno": f"d{i}", "text": f"text {i}", "score": int(rng.integers(0, 5))}
             for i in range(200) for q in (1, 2)]
    if scores == "one missing":
        del lines[150]["score"]
    if scores == "ranks":  # tied, and the scores among them falling or not
        for line in lines:
            line["rank"] = int(rng.integers(0, 5))
    (tmp_path / "rerank.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    whole = read_rerank(detect_corpus(tmp_path))
    for per_query in (1, 7, 199, 500):
        kept = read_rerank(detect_corpus(tmp_path), per_query)
        assert {qid: [c.doc.doc_id for c in found] for qid, found in kept.items()} == \
            {qid: [c.doc.doc_id for c in found[:per_query]] for qid, found in whole.items()}
        assert [c.score for found in kept.values() for c in found] == \
            [c.score for found in whole.values() for c in found[:per_query]]


def test_rerank_qids_are_read_as_topic_numbers_and_queries_cut_or_untitled_are_said(tmp_path, caplog):
    """A qid 1.0 (pandas' to_json of a column with a NaN) was a bad line, one with a right-to-left mark no topic;
    a query of 10,000 candidates lost 9,000 unsaid, one without a text was called "no topic"."""
    from app.topics import read_topics

    lines = [{"qid": 1.0, "query": "Tea?", "docno": "a", "text": "tea", "score": 2},
             {"qid": "1\u200f", "query": "Tea?", "docno": "b", "text": "green tea", "score": 1},
             {"qid": "2", "query": " ", "docno": "c", "text": "coffee", "score": 1},
             *({"qid": 3, "query": "Milk?", "docno": f"m{i}", "text": "milk", "score": -i} for i in range(5))]
    (tmp_path / "rerank.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):
        assert [topic.number for topic in read_topics(tmp_path)] == ["1", "3"]
        candidates = read_rerank(detect_corpus(tmp_path), 3)
    assert [c.doc.doc_id for c in candidates["1"]] == ["a", "b"] and len(candidates["3"]) == 3
    assert "rerank.jsonl: 1 query without a text (query, title) on any line; their candidates are not ranked (2)" \
        in caplog.text
    assert ("rerank.jsonl: 1 of its queries hold more than 3 candidates (e.g. 3: 5); the first stage's best 3 of each "
            "are ranked (--candidates)") in caplog.text


def test_rerank_queries_unlike_their_topics_titles_are_said_before_the_work(fixtures, caplog):
    """A topics file numbering other questions than the re-rank file's (11 and 12 swapped) ranked the candidates of
    one question for another without a word."""
    from app.corpus import rerank_candidates
    from app.topics import read_topics

    source, topics = detect_corpus(fixtures / "rerank"), read_topics(fixtures / "rerank" / "topics.xml")
    titles = {topic.number: topic.title for topic in topics}
    with caplog.at_level(logging.WARNING):
        rerank_candidates(source, titles, 10)
    assert not caplog.messages
    with caplog.at_level(logging.WARNING):
        rerank_candidates(source, {**titles, "11": titles["12"], "12": titles["11"]}, 10)
    assert caplog.messages == ["rerank.jsonl: 2 of its queries share no word with their topic's title, so their "
                               "candidates may be ranked for another question (11: 'Which is better for a first pet, "
                               "a cat or a dog?', the topic 'Should I travel by train or by plane in Europe?'); do "
                               "the topics file and it belong together?"]


@pytest.mark.parametrize("query, title, said", [
    ("laptops desktops", "Which is better, a laptop or a desktop?", False),  # a keyword query, other word forms
    ("vape safety", "Is vaping with e-cigarettes safe?", False),
    ("the", "Should I travel by train?", False),  # a query of function words tells nothing
    ("Which is better, a laptop or a desktop?", "Which is better, tea or coffee?", True),  # question words
])
def test_rerank_queries_and_titles_are_compared_by_their_words_stems(tmp_path, caplog, query, title, said):
    from app.corpus import rerank_candidates

    lines = [{"qid": "1", "query": query, "docno": "a", "text": "text a", "score": 2},
             {"qid": "1", "query": "Is tea healthier than coffee?", "docno": "b", "text": "text b", "score": 1}]
    (tmp_path / "rerank.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):  # a query's first text is its own: the second line's is not read
        rerank_candidates(detect_corpus(tmp_path), {"1": title}, 10)
    assert ("share no word with their topic's title" in caplog.text) is said


def test_rerank_candidates_come_best_first_whatever_the_file_order(fixtures, tmp_path):
    lines = (fixtures / "rerank" / "rerank.jsonl").read_text().splitlines()
    (tmp_path / "rerank.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    candidates = read_rerank(detect_corpus(tmp_path))
    assert [c.doc.doc_id for c in candidates["13"]] == ["p-tea-1", "p-tea-2", "p-tea-3"]


def test_rerank_scores_that_are_not_finite_numbers_give_way_to_the_file_order(tmp_path):
    """NaN and Infinity are what Python's json writes for such floats; "1" and 400 zeros has no float."""
    scores = ["NaN", "Infinity", "-Infinity", "1" + "0" * 400, "true", "7.5"]
    lines = [f'{{"qid": "1", "query": "q", "docno": "d{i}", "text": "t {i}", "score": {score}}}'
             for i, score in enumerate(scores)]
    (tmp_path / "rerank.jsonl").write_text("\n".join(lines) + "\n")
    candidates = read_rerank(detect_corpus(tmp_path))["1"]
    assert [candidate.score for candidate in candidates] == ORDER[:6]  # 7.5 too


def _shuffled_rerank(tmp_path, fields) -> None:
    """A re-rank file of 30 candidates d1..d30 (the first stage's order) in shuffled lines, each with `fields(i)`."""
    lines = [{"qid": "1", "query": "q", "docno": f"d{i}", "text": f"t {i}", **fields(i)} for i in range(1, 31)]
    np.random.default_rng(5).shuffle(lines)
    (tmp_path / "rerank.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize("fields, scores", [
    # a TREC run's columns converted by splitting: numbers as strings
    (lambda i: {"rank": str(i), "score": f"{100 - i}.0"}, [99.0, 98.0, 97.0]),
    (lambda i: {"rank": i}, ORDER[:3]),  # no score: the rank orders them
    (lambda i: {"rank": i, "score": None if i == 2 else 100.0 - i}, ORDER[:3]),
    (lambda i: {"score": 100.0 - i, "rank": "n/a"}, [99.0, 98.0, 97.0]),  # no usable rank: the scores order them
    (lambda i: {"score": 100.0 - i, "rank": "1_0" if i == 5 else str(i)}, [99.0, 98.0, 97.0]),  # no digits for trec
    # a score out of order among falling ones: the rank orders, and the scores stay (they were all replaced)
    (lambda i: {"rank": i, "score": 97.5 if i == 2 else 100.0 - i}, [99.0, 97.5, 97.0]),
    (lambda i: {"rank": "\u20031" if i == 4 else i, "score": 100.0 - i}, [99.0, 98.0, 97.0]),  # no ASCII digits
    # tied ranks, and a missing score in a tie comes after the others, negative ones too
    (lambda i: {"rank": (i + 1) // 2, "score": None if i == 2 else -float(i)}, ORDER[:3]),
])
def test_rerank_lines_in_any_order_keep_the_first_stage_order(tmp_path, caplog, fields, scores):
    """Shuffled lines whose scores were strings, or missing, were ranked in file order, the input's rank 2 at
    position 27 (and out of the reranked head), without a word: a rank given orders them where the scores cannot."""
    _shuffled_rerank(tmp_path, fields)
    for per_query in (None, 5):
        with caplog.at_level(logging.WARNING, logger="app.corpus"):
            candidates = read_rerank(detect_corpus(tmp_path), per_query)["1"]
        assert [c.doc.doc_id for c in candidates] == [f"d{i}" for i in range(1, 31)][:per_query]
        assert [c.score for c in candidates[:3]] == scores
    assert [record.getMessage() for record in caplog.records] == [  # nothing said but the cut at 5
        "rerank.jsonl: 1 of its queries hold more than 5 candidates (e.g. 1: 30); the first stage's best 5 of each "
        "are ranked (--candidates)"]


@pytest.mark.parametrize("rank", [lambda i: i, lambda i: (i + 1) // 2])  # tied ranks, ties to the larger distance
def test_rerank_scores_rising_with_the_rank_give_way_to_it(tmp_path, caplog, rank):
    """Distances (lower is better) with ranks: the input's rank 30 went first."""
    _shuffled_rerank(tmp_path, lambda i: {"rank": rank(i), "score": float(i)})
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        candidates = read_rerank(detect_corpus(tmp_path))["1"]
    assert [c.doc.doc_id for c in candidates] == [f"d{i}" for i in range(1, 31)]
    assert [c.score for c in candidates[:2]] == ORDER[:2]
    assert [record.getMessage() for record in caplog.records] == [
        "rerank.jsonl: 1 of its queries ranked by rank, as their scores rise with it (distances?) and are not used"]
    # A cut within tied ranks keeps the smaller distances (it kept the larger ones, taken for higher scores).
    assert [c.doc.doc_id for c in read_rerank(detect_corpus(tmp_path), 2)["1"]] == ["d1", "d2"]


def test_rerank_order_warnings_count_only_the_queries_ranked(tmp_path, caplog):
    """Queries that are no topic are ignored: their order and size were counted in the warnings all the same."""
    from app.corpus import rerank_candidates

    _shuffled_rerank(tmp_path, lambda i: {})  # query 1: no score nor rank, 30 candidates
    with open(tmp_path / "rerank.jsonl", "a") as out:
        out.writelines(json.dumps({"qid": "2", "query": "q", "docno": f"e{i}", "text": "t", "rank": i}) + "\n"
                       for i in range(1, 4))
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert list(rerank_candidates(detect_corpus(tmp_path), {"2": "q"}, 5)) == ["2"]
    assert [record.getMessage() for record in caplog.records] == [
        "rerank.jsonl: ignoring the candidates of 1 query that is no topic (1)"]


def test_rerank_without_a_score_or_rank_is_ranked_in_file_order_with_a_warning(tmp_path, caplog):
    _shuffled_rerank(tmp_path, lambda i: {"score": "high" if i == 3 else 1.0 / i})
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        candidates = read_rerank(detect_corpus(tmp_path))["1"]
    assert [c.score for c in candidates[:3]] == ORDER[:3]
    assert [record.getMessage() for record in caplog.records] == [
        "rerank.jsonl: 1 of its queries ranked in the file's order: a score and a rank missing or no finite number"]


def test_a_jsonl_corpus_without_an_id_or_a_text_field_names_its_fields(tmp_path, caplog):
    """Records of unknown fields were "skipped 2 records (2 bad lines)", "no usable documents"."""
    (tmp_path / "passages.jsonl").write_text('{"key": "a", "text": "t"}\n{"key": "b", "text": "u"}\n')
    with pytest.raises(ToucheError, match=r"^passages.jsonl: no record has an id \(id, docno, doc_id, docid, _id\) "
                                          r"and a text \(contents, text, body, premises_texts\) field "
                                          r"\(its first has key, text\)$"):
        list(read_documents(detect_corpus(tmp_path)))
    assert "skipped 2 records (2 lines without an id or a text field)" in caplog.text


@pytest.mark.parametrize("name", ["passages.jsonl", "documents.jsonl"])
def test_other_exporters_fields_are_read_whatever_the_files_name(tmp_path, name):
    """An ir_datasets export (doc_id, text), Pyserini's (id, contents), a body, and BEIR's corpus (_id, title, text)
    under a Touché file name were refused, or lost the records written otherwise than the first. A title opens the
    text whatever the id is called (ir_datasets' export of args.me has doc_id, title, text: the titles were lost),
    and a title without a text field is read as one with an empty text is (it was skipped)."""
    records = [{"doc_id": "a", "text": "ir datasets"}, {"id": "b", "contents": "pyserini"},
               {"docno": "c", "body": "a body"}, {"_id": "d", "title": "A title", "text": "and its text"},
               {"_id": "e", "title": "", "text": "no title"}, {"doc": "f", "text": "no id"},
               {"doc_id": "g", "title": " Conclusion ", "text": "premise"},
               {"docno": "h", "title": "Title", "text": " title and body"},
               {"docno": "i", "title": "Gun", "text": "Guns kill"}, {"_id": "j", "title": "A title alone"},
               {"_id": "k", "title": "An empty text", "text": ""}]
    (tmp_path / name).write_text("".join(json.dumps(record) + "\n" for record in records))
    documents = list(read_documents(detect_corpus(tmp_path)))
    assert [(d.doc_id, d.text) for d in documents] == [
        ("a", "ir datasets"), ("b", "pyserini"), ("c", "a body"), ("d", "A title and its text"), ("e", "no title"),
        ("g", "Conclusion premise"), ("h", "title and body"), ("i", "Gun Guns kill"), ("j", "A title alone"),
        ("k", "An empty text")]


def test_a_corpus_of_another_name_keeps_its_fields_reading(tmp_path):
    """--corpus on records with both `id` and `docno` ranked the `docno` ids, and must still (from review: the
    other exporters' names had put `id` first)."""
    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": 7, "docno": "clueweb-1", "text": "t"}\n')
    assert [d.doc_id for d in read_documents(detect_corpus(tmp_path, path))] == ["clueweb-1"]
    path.write_text('{"docid": "d1", "text": "t"}\n')
    assert [d.doc_id for d in read_documents(detect_corpus(tmp_path, path))] == ["d1"]


def test_a_beir_corpus_is_ranked_with_corpus_and_named_without(tmp_path):
    """BEIR's corpus.jsonl (`_id`, `title`, `text`) beside its queries.jsonl (`_id`, `text` too): the corpus is
    named in the "no corpus" error, not the queries, and --corpus reads it."""
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "T", "text": "body"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "a question", "metadata": {}}\n')
    with pytest.raises(ToucheError, match=r"to rank corpus.jsonl, pass --corpus corpus.jsonl$"):
        choose_source(tmp_path, "local", None, False)
    source = detect_corpus(tmp_path, Path("corpus.jsonl"))
    assert [(d.doc_id, d.text) for d in read_documents(source)] == [("d1", "T body")]
    (tmp_path / "corpus.jsonl").unlink()
    with pytest.raises(ToucheError) as error:
        choose_source(tmp_path, "local", None, False)
    assert "queries.jsonl" not in str(error.value)


def test_pretty_printed_json_as_json_lines_says_so(tmp_path):
    """It was "skipped 4 records (4 bad lines)", then "no usable documents"."""
    (tmp_path / "passages.jsonl").write_text('{\n  "id": "a",\n  "contents": "t"\n}\n')
    with pytest.raises(ToucheError, match=r"^passages.jsonl: no line holds a JSON object \(JSON lines: one object a "
                                          r"line, not a JSON array or an object written over several lines\)$"):
        list(read_documents(detect_corpus(tmp_path)))


@pytest.mark.parametrize("name", ["passages.jsonl", "documents.jsonl.gz", "rerank.jsonl", "mine.jsonl"])
@pytest.mark.parametrize("joined", ["\n", ""])  # "[" alone on the first line, or the first element beside it
def test_a_json_array_as_json_lines_says_so(tmp_path, name, joined):
    """Written an element a line, its last element alone was read (a re-rank file's last candidate ranked), the
    others counted as bad lines; on one line it was "1 bad line", "no usable documents"."""
    records = [json.dumps({"qid": "1", "query": "q", "id": f"p{i}", "docno": f"p{i}", "contents": "t", "text": "t"})
               for i in range(3)]
    text = "[" + joined + ",\n".join(records) + "\n]\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(ToucheError, match=rf"^{name}: a JSON array, not JSON lines \(one object a line\)$"):
        source = detect_corpus(tmp_path, path if name == "mine.jsonl" else None)
        read_rerank(source) if source.kind == "rerank" else list(read_documents(source))


def test_ir_datasets_export_of_args_me_is_read_as_args_me_reads(tmp_path):
    """`ir_datasets export argsme/... docs --format jsonl` writes doc_id, conclusion, premises_texts (its premises
    list is not exported): it was "no record has an id and a text field"."""
    record = {"doc_id": "S1-A1", "conclusion": "Tea is healthy", "premises_texts": "It has antioxidants.",
              "aspects_names": "", "source_id": "S1", "source_title": "Tea", "topic": "Tea"}
    (tmp_path / "documents.jsonl").write_text(json.dumps(record) + "\n")
    assert list(read_documents(detect_corpus(tmp_path))) == [Document("S1-A1", "Tea is healthy It has antioxidants.")]
    (tmp_path / "documents.jsonl").rename(tmp_path / "argsme-docs.jsonl")  # any name, given with --corpus
    source = detect_corpus(tmp_path, Path("argsme-docs.jsonl"))
    assert [doc.text for doc in read_documents(source)] == ["Tea is healthy It has antioxidants."]


@pytest.mark.parametrize("name", ["passages.jsonl", "rerank.jsonl"])
def test_a_json_lines_file_cut_short_is_an_error_not_a_run_of_what_came_before(tmp_path, name):
    """A plain file cut within a record (a copy stopped) ranked the documents before the cut with exit 0, "1 bad
    line"; a gzip stream cut so was an error already."""
    records = "".join(json.dumps({"qid": "1", "query": "q", "docno": f"p{i}", "id": f"p{i}", "text": "a text",
                                  "contents": "a text"}) + "\n" for i in range(3))
    path = tmp_path / name
    for cut in (records[:-20], records + '{"id": "p9", "meta": {"b": 1}', records.rstrip("\n") + '{"id": "p9", "t'):
        path.write_text(cut)  # within a string, after a nested object, within the second of two joined records
        with pytest.raises(ToucheError, match=rf"^{name}: cut short: its last line \(line \d\) ends within a record, "
                                              "without a line end; copy the file again$"):
            source = detect_corpus(tmp_path)
            read_rerank(source) if source.kind == "rerank" else list(read_documents(source))
    path.write_text(records.rstrip("\n"))  # a whole last record without its line end is read
    source = detect_corpus(tmp_path)
    assert len(read_rerank(source)["1"] if source.kind == "rerank" else list(read_documents(source))) == 3
    path.write_text(records + "not json\n")  # a bad line that ends is a bad line
    assert len(read_rerank(source)["1"] if source.kind == "rerank" else list(read_documents(source))) == 3
    for last in ('{"id": "p9", "docno": "p9", "qid": "1", "text": "C:\\path\\x"}', "{'id': 'p9'}", "\x1a"):
        path.write_text(records + last)  # a whole record that is no JSON, or a DOS end-of-file mark: a bad line
        assert len(read_rerank(source)["1"] if source.kind == "rerank" else list(read_documents(source))) == 3


def test_a_first_line_of_plain_values_is_a_bad_line_not_a_json_array(tmp_path, caplog):
    """A header line (`["id", "contents"]`) cost the whole corpus: "a JSON array, not JSON lines"."""
    (tmp_path / "passages.jsonl").write_text('["id", "contents"]\n{"id": "a", "contents": "t"}\n')
    assert [doc.doc_id for doc in read_documents(detect_corpus(tmp_path))] == ["a"]
    assert "1 bad line" in caplog.text


def test_objects_without_usable_values_are_no_usable_documents(tmp_path):
    """Objects of the right fields whose values are unusable are no layout problem (from review: they were said to
    be no JSON objects)."""
    (tmp_path / "passages.jsonl").write_text('{"id": "a", "contents": null}\n{"id": ["b"], "contents": "t"}\n')
    with pytest.raises(ToucheError, match=r"^passages.jsonl: no usable documents$"):
        list(read_documents(detect_corpus(tmp_path)))


def test_a_rerank_file_without_its_fields_names_them(tmp_path):
    """A document id under no name a re-rank file may use: "skipped 2 records (2 bad lines)", "no usable candidates"."""
    (tmp_path / "rerank.jsonl").write_text('{"qid": "1", "doc": "a", "text": "t"}\n' * 2)
    with pytest.raises(ToucheError, match=r"^rerank.jsonl: no record has the fields qid and docno \(or doc_id, docid; "
                                          r"its first has doc, qid, text\)$"):
        read_rerank(detect_corpus(tmp_path))


def test_a_rerank_file_naming_its_documents_docid_or_doc_id_is_read(tmp_path):
    """A first stage writing BEIR's or ir_datasets' name for the document id (as the BEIR Touché 2020 sample does) was
    refused: "no record has the fields qid and docno"."""
    (tmp_path / "rerank.jsonl").write_text('{"qid": "1", "docid": "a", "text": "t", "score": 2}\n'
                                           '{"qid": "1", "doc_id": "b", "text": "u", "score": 1}\n')
    found = read_rerank(detect_corpus(tmp_path))
    assert [candidate.doc.doc_id for candidate in found["1"]] == ["a", "b"]
    (tmp_path / "rerank.jsonl").rename(tmp_path / "first-stage.jsonl")
    assert detect_corpus(tmp_path, tmp_path / "first-stage.jsonl").kind == "rerank"


def test_records_written_back_to_back_on_one_line_are_each_read(tmp_path, caplog):
    """`cat a.jsonl.gz b.jsonl.gz` of a file whose last line had no newline: "skipped 1 record", 2 lost."""
    a = "\n".join(json.dumps({"id": f"a{i}", "contents": f"text {i}"}) for i in range(3))
    b = "".join(json.dumps({"id": f"b{i}", "contents": f"text {i}"}) + "\n" for i in range(3))
    (tmp_path / "passages.jsonl.gz").write_bytes(gzip.compress(a.encode()) + gzip.compress(b.encode()))
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        documents = list(read_documents(detect_corpus(tmp_path)))
    assert [d.doc_id for d in documents] == ["a0", "a1", "a2", "b0", "b1", "b2"] and not caplog.records
    (tmp_path / "passages.jsonl.gz").unlink()
    (tmp_path / "passages.jsonl").write_text(' {"id": "c", "contents": "t"} \t{"id": "d", "contents": "u"} x\n'
                                             '{"id": "e", "contents": "v"}\n' + "1 " * 1_000_000 + "\n")
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["e"]  # not JSON, whole; no records
    assert "skipped 2 records (2 bad lines)" in caplog.text


@pytest.mark.parametrize("name", ["passages.jsonl", "rerank.jsonl"])
def test_files_saved_with_a_byte_order_mark_and_joined_by_cat_are_read_whole(tmp_path, caplog, name):
    """The BOM that opened the second file opened a line, or sat between two records on one: a bad line each."""
    def record(doc_id: str) -> str:
        return json.dumps({"qid": "1", "query": "tea", "docno": doc_id, "text": "tea", "rank": 1, "score": 1.0}
                          if name == "rerank.jsonl" else {"id": doc_id, "contents": "tea"})

    bom = "\ufeff"
    (tmp_path / name).write_text(f"{bom}{record('a')}\n{bom}{record('b')}\n{bom} {record('c')}{bom}{record('d')}\n",
                                 encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        source = detect_corpus(tmp_path)
        read = ([c.doc.doc_id for c in read_rerank(source)["1"]] if name == "rerank.jsonl"
                else [d.doc_id for d in read_documents(source)])
    assert read == ["a", "b", "c", "d"] and not caplog.records, caplog.text


def test_a_line_nested_too_deep_to_parse_is_a_bad_line(tmp_path, caplog):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "passages.jsonl").write_text(f'{{"id": "a", "contents": "kept", "meta": {deep}}}\n'
                                             '{"id": "b", "contents": "kept too"}\n')
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["b"]
    assert "skipped 1 record (1 bad line)" in caplog.text


# --- which corpus: one documented precedence, an error where the choice is the user's ---------------------------


def _files(directory: Path, *names: str) -> Path:
    directory.mkdir(exist_ok=True)
    for name in names:
        (directory / name).write_text("")
    return directory


@pytest.mark.parametrize("names, ranked, ignored", [
    (("rerank.jsonl.gz", "passages.jsonl", "args-me.json"), "rerank.jsonl.gz", "args-me.json, passages.jsonl"),
    (("args-me.json", "debateorg.json", "idebate.json"), "args-me.json", "debateorg.json, idebate.json"),
    (("passages.jsonl", "passages.jsonl.gz"), "passages.jsonl", "passages.jsonl.gz"),
    (("rerank.jsonl", "rerank.jsonl.gz"), "rerank.jsonl", "rerank.jsonl.gz"),
])
def test_precedence_ranks_one_file_and_names_the_ignored_ones(tmp_path, caplog, names, ranked, ignored):
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert detect_corpus(_files(tmp_path, *names)).name == ranked
    assert [record.getMessage() for record in caplog.records] == [f"ranking {ranked} ({'a re-rank file comes first' if ranked.startswith('rerank') else 'precedence'}); ignoring {ignored}"]


@pytest.mark.parametrize("names", [("args-me.json", "passages.jsonl"), ("debatewise.json", "documents.jsonl.gz"),
                                   ("passages.jsonl.gz", "documents.jsonl")])
def test_two_local_corpora_of_different_kinds_are_an_error_naming_both(tmp_path, names):
    with pytest.raises(ToucheError) as error:
        detect_corpus(_files(tmp_path, *names))
    assert all(f"--corpus {name}" in str(error.value) for name in names), error.value


def test_corpus_choice_wins_and_is_checked(tmp_path, caplog):
    inputs = _files(tmp_path / "in", "args-me.json", "passages.jsonl")
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert detect_corpus(inputs, Path("passages.jsonl")).paths == (inputs / "passages.jsonl",)
    assert "ranking passages.jsonl (--corpus); ignoring args-me.json" in caplog.text
    elsewhere = _files(tmp_path / "elsewhere", "documents.jsonl")
    source = detect_corpus(inputs, elsewhere / "documents.jsonl")
    assert (source.kind, source.id_field, source.text_field) == ("jsonl", "docno", "text")
    with pytest.raises(ToucheError, match="a directory, not a file"):
        detect_corpus(inputs, elsewhere)
    with pytest.raises(ToucheError, match=f"--corpus documents.jsonl: no such file, here or in {inputs}"):
        detect_corpus(inputs, Path("documents.jsonl"))
    (tmp_path / "dir" / "passages.jsonl").mkdir(parents=True)
    with pytest.raises(ToucheError, match="passages.jsonl: a directory, not a file"):
        detect_corpus(inputs, tmp_path / "dir" / "passages.jsonl")
    with pytest.raises(ToucheError, match="--corpus /dev/null: not a regular file"):
        detect_corpus(inputs, Path("/dev/null"))


def test_a_corpus_choice_beside_the_inputs_own_of_the_same_name_says_which_is_which(tmp_path, caplog, monkeypatch):
    inputs = _files(tmp_path / "in", "passages.jsonl")
    _files(tmp_path / "here", "passages.jsonl")
    monkeypatch.chdir(tmp_path / "here")
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert detect_corpus(inputs, Path("passages.jsonl")).paths == (Path("passages.jsonl"),)
    assert (f"ranking {tmp_path / 'here' / 'passages.jsonl'} (--corpus); ignoring {inputs / 'passages.jsonl'}"
            in caplog.text)


def test_a_local_corpus_wins_over_chatnoir_credentials_and_says_so(tmp_path, caplog):
    inputs = _files(tmp_path, "passages.jsonl")
    with caplog.at_level(logging.WARNING, logger="app.corpus"):
        assert choose_source(inputs, "auto", None, chatnoir=True).name == "passages.jsonl"
        assert choose_source(inputs, "chatnoir", None, chatnoir=True) is None
    assert [record.getMessage() for record in caplog.records] == [
        "ranking passages.jsonl (a local corpus comes first); ignoring the ChatNoir credentials (--backend chatnoir "
        "uses them)", "ranking ChatNoir's results (--backend chatnoir); ignoring passages.jsonl"]
    assert choose_source(tmp_path / "nothing-here", "auto", None, chatnoir=True) is None
    with pytest.raises(ToucheError, match=r"no corpus in .*rerank.jsonl\[.gz\]$"):  # no ChatNoir hint: local chosen
        choose_source(tmp_path / "nothing-here", "local", None, chatnoir=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "queries.jsonl").write_text(json.dumps({"qid": "1", "query": "q"}) + "\n")  # no corpus: not named
    with pytest.raises(ToucheError, match="with CHATNOIR_API_KEY$"):
        choose_source(other, "auto", None, chatnoir=False)
    with gzip.open(other / "bm25.jsonl.gz", "wt") as handle:
        handle.write(json.dumps({"qid": "1", "docno": "d1", "text": "t", "score": 1.0}) + "\n")
    with pytest.raises(ToucheError, match="or --backend chatnoir with CHATNOIR_API_KEY; to rank bm25.jsonl.gz, pass "
                                          "--corpus bm25.jsonl.gz"):
        choose_source(other, "auto", None, chatnoir=False)
    (other / "bm25.jsonl.gz").unlink()
    (other / "metadata.json").write_text(json.dumps({"name": "not a corpus"}))
    with pytest.raises(ToucheError, match="with CHATNOIR_API_KEY$"):
        choose_source(other, "auto", None, chatnoir=False)
    (other / "args-me-1.0-cleaned.json").write_text(json.dumps({"arguments": []}))  # as the release names it
    with pytest.raises(ToucheError, match="to rank args-me-1.0-cleaned.json, pass --corpus args-me-1.0-cleaned.json"):
        choose_source(other, "auto", None, chatnoir=False)
    with pytest.raises(ToucheError, match="cannot go with --backend chatnoir"):
        choose_source(inputs, "chatnoir", Path("passages.jsonl"), chatnoir=True)


# --- damaged bytes: one place where corpus bytes become records ------------------------------------------------


def _passages(tmp_path, lines: list[bytes], name: str = "passages.jsonl"):
    data = b"\n".join(lines) + b"\n"
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return detect_corpus(tmp_path)


def test_undecodable_bytes_cost_a_character_not_the_run(tmp_path, caplog):
    source = _passages(tmp_path, [
        b'{"id": "ok", "contents": "plain text"}',
        '{"id": "latin", "contents": "caf\xe9 cr\xe8me"}'.encode("latin-1"),
        b'{"id": "cut", "contents": "half a char \xe2\x82"}',
    ])
    with caplog.at_level(logging.WARNING):
        documents = {d.doc_id: d.text for d in read_documents(source)}
    assert documents == {"ok": "plain text", "latin": "caf\ufffd cr\ufffdme", "cut": "half a char \ufffd"}
    assert caplog.text.count("replaced 3 undecodable bytes") == 1


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_a_genuine_replacement_character_is_not_counted_as_a_repair(tmp_path, monkeypatch, caplog, chunk):
    monkeypatch.setattr("app.corpus._CHUNK_BYTES", chunk)  # U+FFFD (EF BF BD) split across reads
    source = _passages(tmp_path, [json.dumps({"id": "a", "contents": "x\ufffdy"}, ensure_ascii=False).encode()])
    with caplog.at_level(logging.WARNING):
        assert [d.text for d in read_documents(source)] == ["x\ufffdy"]
    assert "undecodable" not in caplog.text


def test_plain_json_lines_under_a_gz_name_are_read_as_they_are(tmp_path, caplog):
    """They were "truncated or corrupt gzip file (Not a gzipped file (b'{\"'))"."""
    _passages(tmp_path, [json.dumps({"id": "a", "contents": "tea"}).encode()])
    (tmp_path / "passages.jsonl").rename(tmp_path / "passages.jsonl.gz")
    source = detect_corpus(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_documents(source)] == ["a"]
        assert [d.doc_id for d in read_documents(source, report=False)] == ["a"]
    assert caplog.messages == ["passages.jsonl.gz: read as it is: not gzip-compressed, whatever its name"]


def test_gzip_is_told_by_its_bytes_whatever_the_name(tmp_path, caplog):
    """A gzipped passages.jsonl was read as its bytes ("no line holds a JSON object", after thousands of "replaced
    undecodable bytes"), as was --corpus Passages.JSONL.GZ (the name's case decided)."""
    packed = gzip.compress(json.dumps({"id": "a", "contents": "tea"}).encode() + b"\n")
    (tmp_path / "passages.jsonl").write_bytes(packed)
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["a"]
    (tmp_path / "passages.jsonl").rename(tmp_path / "Passages.JSONL.GZ")
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_documents(choose_source(tmp_path, "local", tmp_path / "Passages.JSONL.GZ",
                                                               False))] == ["a"]
    assert not caplog.messages


@pytest.mark.parametrize("name", ["rerank.jsonl.gz", "rerank.jsonl", "passages.jsonl"])
@pytest.mark.parametrize("thing", ["directory", "dangling link"])
def test_a_corpus_name_on_no_file_is_an_error_not_passed_over(tmp_path, name, thing):
    """A re-rank file's mount that is a directory or a dangling link beside passages.jsonl.gz: the run ranked the
    whole corpus instead, with exit 0 and no word."""
    inputs = _files(tmp_path / "in", "passages.jsonl.gz")
    if thing == "directory":
        (inputs / name).mkdir()
    else:
        (inputs / name).symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(ToucheError, match=rf"{name}: (a directory, not a file|a link to .*gone.jsonl, which leads "
                                          "nowhere); remove it, or choose the corpus with --corpus$"):
        detect_corpus(inputs)
    assert detect_corpus(inputs, Path("passages.jsonl.gz")).paths == (inputs / "passages.jsonl.gz",)

    # Below the corpus a run reads, such a name stood in for nothing, and is no error.
    reranked = _files(tmp_path / "reranked", "rerank.jsonl.gz")
    (reranked / "documents.jsonl").mkdir()
    (reranked / "args-me.json").symlink_to(tmp_path / "gone.json")
    assert detect_corpus(reranked).paths == (reranked / "rerank.jsonl.gz",)


def test_words_at_tars_magic_offset_are_no_tar(tmp_path):
    """"ustar " at byte 257 ("...gustar a todos") refused a Spanish corpus as "packed with tar"."""
    opening = '{"id": "a", "contents": "'
    text = opening + "x" * (257 - len(opening) - 2) + ' gustar a todos"}'
    assert text.index("ustar ") == 257
    (tmp_path / "passages.jsonl").write_text(text + "\n")
    assert [doc.doc_id for doc in read_documents(detect_corpus(tmp_path))] == ["a"]


def test_a_corpus_compressed_twice_is_said_so(tmp_path):
    """gzip inside gzip was "no line holds a JSON object (JSON lines: one object a line, ...)" after a warning of
    hundreds of undecodable bytes: the wrong problem named."""
    packed = gzip.compress(json.dumps({"id": "a", "contents": "tea"}).encode() + b"\n")
    (tmp_path / "passages.jsonl.gz").write_bytes(gzip.compress(packed))
    with pytest.raises(ToucheError, match=r"passages.jsonl.gz: gzip inside gzip \(compressed twice\): unpack it once$"):
        list(read_documents(detect_corpus(tmp_path)))


@pytest.mark.parametrize("packer, name", [("xz", "passages.jsonl.gz"), ("bzip2", "passages.jsonl"),
                                          ("zip", "passages.jsonl"), ("xz", "args-me.json"),
                                          ("zstd", "passages.jsonl"), ("7z", "passages.jsonl.gz"),
                                          ("lz4", "passages.jsonl"), ("tar", "passages.jsonl.gz"),
                                          ("tar", "passages.jsonl")])
def test_a_corpus_packed_otherwise_than_gzip_is_said_so(tmp_path, packer, name):
    """xz, bzip2 or zip were read as text: "no line holds a JSON object" after thousands of undecodable bytes, and
    a zip stored without compression lost its first record (on the line of the zip header) with exit 0."""
    import bz2
    import lzma
    import zipfile

    text = (json.dumps({"arguments": [{"id": "a", "conclusion": "tea", "premises": [{"text": "tea is good"}]}]})
            if name.endswith(".json") else json.dumps({"id": "a", "contents": "tea"})).encode() + b"\n"
    magic = {"zstd": b"\x28\xb5\x2f\xfd", "7z": b"7z\xbc\xaf\x27\x1c", "lz4": b"\x04\x22\x4d\x18"}
    if packer == "zip":
        with zipfile.ZipFile(tmp_path / name, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("passages.jsonl", text)
    elif packer == "tar":  # `tar czf passages.jsonl.gz passages.jsonl`: its header joined the first record
        import io
        import tarfile

        with tarfile.open(tmp_path / name, "w:gz" if name.endswith(".gz") else "w") as archive:
            member = tarfile.TarInfo("passages.jsonl")
            member.size = len(text)
            archive.addfile(member, io.BytesIO(text))
    elif packer in magic:  # their signatures (no packer of theirs in the standard library)
        (tmp_path / name).write_bytes(magic[packer] + bytes(range(256)))
    else:
        (tmp_path / name).write_bytes(lzma.compress(text) if packer == "xz" else bz2.compress(text))
    with pytest.raises(ToucheError, match=rf"{name}: packed with {packer}, which is not read here: unpack it, "
                                          "or pack it with gzip$"):
        list(read_documents(detect_corpus(tmp_path)))


@pytest.mark.parametrize("damage", ["truncated", "not gzip"])
def test_a_damaged_gzip_is_a_one_line_error_naming_the_file(tmp_path, damage):
    data = gzip.compress(b"".join(b'{"id": "p%d", "contents": "text %d"}\n' % (i, i) for i in range(5000)))
    data = data[: len(data) // 2] if damage == "truncated" else b"\x1f\x8bnot really gzip" + data[20:]
    (tmp_path / "passages.jsonl.gz").write_bytes(data)
    with pytest.raises(ToucheError, match="passages.jsonl.gz: truncated or corrupt gzip file") as error:
        list(read_documents(detect_corpus(tmp_path)))
    assert "\n" not in str(error.value)


def test_ids_the_run_file_cannot_hold_are_skipped_and_texts_are_bounded(tmp_path, caplog):
    from app.records import MAX_TEXT_CHARS

    source = _passages(tmp_path, [
        b'{"id": "two words", "contents": "an id with a space"}',
        b'{"id": "tab\\there", "contents": "an id with a tab"}',
        b'{"id": 7, "contents": "a numeric id"}',
        b'{"id": true, "contents": "a boolean id"}',
        b'{"id": "surrogate", "contents": "lone \\ud800 half"}',
        b'{"id": "x\\ud800", "contents": "an id no UTF-8 file can hold"}',
        b'{"id": "nul\\u0000", "contents": "an id a C tool cuts short"}',
        b'{"id": "zero\\u200bwidth", "contents": "an id with an invisible character"}',
        b'{"id": "soft\\u00adhyphen\\u200d\\ud83d\\udcbb", "contents": "a soft hyphen and a joiner stay"}',
        b'{"id": "number", "contents": "an integer past Python\'s digits", "n": ' + b"9" * 4301 + b'}',
        json.dumps({"id": "huge", "contents": "word " * MAX_TEXT_CHARS}).encode(),
    ])
    with caplog.at_level(logging.WARNING):
        documents = {d.doc_id: d.text for d in read_documents(source)}
    assert set(documents) == {"7", "surrogate", "huge", "soft\u00adhyphen\u200d\U0001f4bb"}
    assert documents["surrogate"] == "lone \ufffd half"
    assert len(documents["huge"]) == MAX_TEXT_CHARS
    assert "skipped 7 records (7 bad lines)" in caplog.text


def test_argsme_reads_past_odd_values_a_bom_and_premises_that_are_no_list(tmp_path):
    """An integer longer than Python's 4,300 digits once crashed ijson's C parser (SIGSEGV), so the read runs in
    a child process: a crash fails this test instead of ending the test run. Such a run of digits is read as 0,
    and Python's limit is never lifted."""
    import subprocess
    import sys

    arguments = [{"id": "a", "conclusion": "Tea", "premises": [{"text": "is good", "stance": "PRO"}], "n": 0},
                 {"id": "b", "conclusion": "Tea", "premises": 5},
                 {"id": "c", "conclusion": "Coffee", "premises": True},
                 {"id": "d", "conclusion": "Coffee", "premises": [{"text": "wakes", "stance": "CON"}]}]
    text = json.dumps({"arguments": arguments}).replace('"n": 0', '"n": ' + "9" * 5000)
    (tmp_path / "args-me.json").write_bytes(b"\xef\xbb\xbf" + text.encode())
    script = ("import sys; from pathlib import Path; from app.corpus import detect_corpus, read_documents; "
              "print([(d.doc_id, d.text, d.stance) for d in read_documents(detect_corpus(Path(sys.argv[1])))]); "
              "print(sys.get_int_max_str_digits())")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert result.returncode == 0, result.stderr[-500:]
    documents, digits = result.stdout.strip().splitlines()
    assert documents == str([("a", "Tea is good", "PRO"), ("b", "Tea", None), ("c", "Coffee", None),
                             ("d", "Coffee wakes", "CON")])
    assert digits == str(sys.get_int_max_str_digits())


def test_argsme_with_an_undecodable_byte_still_reads(fixtures, tmp_path, caplog):
    raw = (fixtures / "argsme" / "args-me.json").read_bytes().replace(b"School uniforms", b"Sch\xf6ol uniforms", 1)
    (tmp_path / "args-me.json").write_bytes(raw)
    with caplog.at_level(logging.WARNING):
        documents = list(read_documents(detect_corpus(tmp_path)))
    assert len(documents) == 9 and documents[0].text.startswith("Sch\ufffdol uniforms")
    assert "replaced 1 undecodable byte " in caplog.text


def test_a_second_pass_can_keep_quiet_about_defects(fixtures, caplog):
    with caplog.at_level(logging.WARNING):
        list(read_documents(detect_corpus(fixtures / "argsme"), report=False))
    assert "skipped" not in caplog.text


@pytest.mark.parametrize("name, record, kind, fields", [
    ("my-passages.jsonl", {"id": "p1", "contents": "text"}, "jsonl", ("id", "contents")),
    ("docs.jsonl.gz", {"docno": "d1", "text": "text"}, "jsonl", ("docno", "text")),
    ("bm25-top1000.jsonl.gz", {"qid": "1", "query": "q", "docno": "d1", "text": "t", "score": 1}, "rerank",
     ("docno", "text")),
])
def test_corpus_choice_of_another_name_is_read_as_its_first_record_says(tmp_path, name, record, kind, fields):
    path = tmp_path / name
    lines = "\n" + "not json\n" + json.dumps(record) + "\n"
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as handle:
            handle.write(lines)
    else:
        path.write_text(lines)
    source = detect_corpus(tmp_path, path)
    assert (source.kind, source.paths, (source.id_field, source.text_field)) == (kind, (path,), fields)


def test_corpus_choice_of_another_name_that_says_nothing_is_an_error(tmp_path):
    (tmp_path / "corpus.json").write_text('{"arguments": []}')
    assert detect_corpus(tmp_path, tmp_path / "corpus.json").kind == "argsme"
    (tmp_path / "lines.json").write_text('{"id": "d1", "contents": "t"}\n{"id": "d2", "contents": "u"}\n')
    with pytest.raises(ToucheError, match=r"not an args.me JSON file \(.*trailing garbage.*\); JSON lines\? name "
                                          r"the file .jsonl$"):
        list(read_documents(detect_corpus(tmp_path, tmp_path / "lines.json")))
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"key": "d1", "body": "t"}) + "\n")
    with pytest.raises(ToucheError, match=r"first record has the fields body, key; expected an id \(docno, doc_id, "
                                          r"docid, id, _id\) and a text \(text, contents, body, premises_texts\)"):
        detect_corpus(tmp_path, tmp_path / "corpus.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ToucheError, match="no JSON object in its first 100 lines"):
        detect_corpus(tmp_path, tmp_path / "empty.jsonl")
    (tmp_path / "array.jsonl").write_text(json.dumps([{"id": "d1", "contents": "t"}]) + "\n")
    with pytest.raises(ToucheError, match=r"array.jsonl: a JSON array, not JSON lines"):
        detect_corpus(tmp_path, tmp_path / "array.jsonl")
    (tmp_path / "strings.jsonl").write_text(json.dumps("d1") + "\n")
    with pytest.raises(ToucheError, match="its first JSON line is str, not an object"):
        detect_corpus(tmp_path, tmp_path / "strings.jsonl")
    (tmp_path / "corpus.tsv").write_text("d1\tt\n")
    with pytest.raises(ToucheError, match=r"expected args.me JSON \(.json\[.gz\]\) or JSON lines"):
        detect_corpus(tmp_path, tmp_path / "corpus.tsv")


def test_a_corpus_file_that_is_no_file_is_named_not_missed(tmp_path):
    (tmp_path / "passages.jsonl.gz").symlink_to(tmp_path / "moved.jsonl.gz")
    with pytest.raises(ToucheError, match="passages.jsonl.gz: a link to .*moved.jsonl.gz, which leads nowhere"):
        choose_source(tmp_path, "auto", None, chatnoir=False)


@pytest.mark.parametrize("name", ["passages.jsonl.gz", "args-me.json"])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_corpus_in_utf16_without_a_byte_order_mark_is_read_whole(tmp_path, name, encoding, caplog):
    """Its first bytes a NUL every other place: it was "invalid char in json text", or no line read."""
    if name == "args-me.json":
        text = json.dumps({"arguments": [{"id": f"p{i}", "conclusion": "Tea", "premises": [{"text": f"th\u00e9 {i}"}]}
                                         for i in range(3)]})
    else:
        text = "".join(json.dumps({"id": f"p{i}", "contents": f"Tea th\u00e9 {i}"}) + "\n" for i in range(3))
    data = text.encode(encoding)
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    documents = list(read_documents(detect_corpus(tmp_path)))
    assert [d.doc_id for d in documents] == ["p0", "p1", "p2"] and "th\u00e9 2" in documents[2].text
    assert "skipped" not in caplog.text and "undecodable" not in caplog.text


def test_a_corpus_whose_first_line_holds_nuls_is_still_utf8(tmp_path):
    """NULs in the first record alone (a damaged line) are no UTF-16: the other lines are read."""
    (tmp_path / "passages.jsonl").write_bytes(b'\0\0\0\0\0\0\0\0\0\n{"id": "a", "contents": "ok"}\n')
    assert [d.doc_id for d in read_documents(detect_corpus(tmp_path))] == ["a"]


def test_a_raw_control_character_in_a_json_line_costs_no_record(tmp_path):
    """JSON forbids a raw tab in a string, yet an exporter writes one: it costs no record (args.me: a space)."""
    (tmp_path / "passages.jsonl").write_bytes(b'{"id": "a", "contents": "tab\there"}\n{"id": "b", "contents": "ok"}\n')
    assert [(d.doc_id, d.text) for d in read_documents(detect_corpus(tmp_path))] == [("a", "tab here"), ("b", "ok")]


@pytest.mark.parametrize("name", ["passages.jsonl", "passages.jsonl.gz", "rerank.jsonl", "args-me.json"])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_corpus_in_utf16_with_a_byte_order_mark_is_read_whole(tmp_path, name, encoding, caplog):
    """What Windows' "Unicode" and PowerShell 5's ">" write: read as UTF-8, the first record was lost and the others
    reached json.loads as UTF-16, with only "skipped 2 records" to say so. UTF-32's BOM begins as UTF-16's."""
    from app.topics import read_topics

    records = {"passages": [{"id": f"p{i}", "contents": f"Tea \u00e9 {i} \U0001f375"} for i in range(3)],
               "rerank": [{"qid": "1", "query": "Is tea good?", "docno": f"p{i}", "text": f"Tea {i}", "score": 3 - i}
                          for i in range(3)]}
    if name == "args-me.json":
        text = json.dumps({"arguments": [{"id": f"p{i}", "conclusion": "Tea", "premises": [{"text": f"good {i}"}]}
                                         for i in range(3)]})
    else:
        text = "".join(json.dumps(record) + "\n" for record in records[name.split(".")[0]])
    data = (b"\xfe\xff" if encoding == "utf-16-be" else b"") + text.encode(encoding)
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    source = detect_corpus(tmp_path)
    if name == "rerank.jsonl":
        assert [c.doc.doc_id for c in read_rerank(source)["1"]] == ["p0", "p1", "p2"]
        assert [topic.title for topic in read_topics(tmp_path)] == ["Is tea good?"]
    else:
        documents = list(read_documents(source))
        assert [d.doc_id for d in documents] == ["p0", "p1", "p2"]
        assert name == "args-me.json" or documents[2].text == "Tea \u00e9 2 \U0001f375"
    assert "skipped" not in caplog.text and "undecodable" not in caplog.text
