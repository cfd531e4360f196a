import gzip
import json
import logging
import shutil

import pytest

from app.corpus import detect_corpus, read_documents, read_rerank
from app.errors import ToucheError


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
    assert "skipped 2 records (1 duplicate ids, 1 empty texts)" in caplog.text


def test_argsme_per_portal_files(fixtures, tmp_path):
    arguments = json.loads((fixtures / "argsme" / "args-me.json").read_text())["arguments"]
    json.dump({"arguments": arguments[:4]}, (tmp_path / "debateorg.json").open("w"))
    json.dump({"arguments": arguments[4:8]}, (tmp_path / "idebate.json").open("w"))
    source = detect_corpus(tmp_path)
    assert source.kind == "argsme" and len(source.paths) == 2
    assert len(list(read_documents(source))) == 8


def test_passages_skip_bad_lines_duplicates_and_empty_texts(fixtures, caplog):
    with caplog.at_level(logging.WARNING):
        documents = list(read_documents(detect_corpus(fixtures / "passages")))
    assert len(documents) == 11
    assert len({d.doc_id for d in documents}) == 11
    assert "skipped 3 records (1 bad lines, 1 duplicate ids, 1 empty texts)" in caplog.text


def test_gzipped_passages(fixtures, tmp_path):
    with (fixtures / "passages" / "passages.jsonl").open("rb") as plain, \
            gzip.open(tmp_path / "passages.jsonl.gz", "wb") as packed:
        shutil.copyfileobj(plain, packed)
    assert len(list(read_documents(detect_corpus(tmp_path)))) == 11


def test_nothing_usable_is_an_error(tmp_path):
    (tmp_path / "passages.jsonl").write_text('{"id": "a", "contents": ""}\nnot json\n')
    with pytest.raises(ToucheError, match="no usable documents"):
        list(read_documents(detect_corpus(tmp_path)))


def test_broken_argsme_json_is_an_error(tmp_path):
    (tmp_path / "args-me.json").write_text('{"arguments": [{"id": "x", "conclusion": "c", ')
    with pytest.raises(ToucheError, match="not an args.me JSON"):
        list(read_documents(detect_corpus(tmp_path)))


def test_rerank_file_groups_candidates_by_query(fixtures):
    candidates = read_rerank(detect_corpus(fixtures / "rerank"))
    assert list(candidates) == ["11", "12", "13"]
    assert [c.doc.doc_id for c in candidates["13"]] == ["p-tea-1", "p-tea-2", "p-tea-3"]
    assert candidates["13"][0].score == 9.0
