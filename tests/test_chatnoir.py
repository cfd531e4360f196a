"""ChatNoir backend against a faithful local ChatNoir (tests/chatnoir_stub.py) on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote, quote_plus
from uuid import NAMESPACE_URL, uuid5

import pytest
import requests
from chatnoir_api.v1.model import SearchResponse

from app.chatnoir import (
    CREDENTIALS_FILE,
    ChatNoirBackend,
    ChatNoirClient,
    ChatNoirRequestError,
    ChatNoirSettings,
    ChatNoirStats,
    has_credentials,
)
from app.errors import ToucheError
from app.records import Topic, bounded_text

KEY = "sEcReT-kEy-7f3a9c0d1e2b"
REPO = Path(__file__).resolve().parents[1]
TOPICS = [
    Topic("1", "Should teachers get tenure?"),
    Topic("2", "Is vaping with e-cigarettes safe?"),
    Topic("3", "Should social security be privatized?"),
]


def _load_stub_module():
    spec = importlib.util.spec_from_file_location("chatnoir_stub", Path(__file__).parent / "chatnoir_stub.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


chatnoir_stub = _load_stub_module()


@pytest.fixture
def stub(fixtures):
    server = chatnoir_stub.ChatNoirStub(
        chatnoir_stub.read_corpus(fixtures / "chatnoir" / "corpus.jsonl"), api_key=KEY, hang_s=2.0
    ).start()
    yield server
    server.stop()


@pytest.fixture
def settings(stub, tmp_path):
    return ChatNoirSettings(
        api_key=KEY, base_url=stub.base_url, cache_dir=tmp_path / "cache",
        timeout_s=0.3, concurrency=4, retries=2, backoff_s=0.01,
    )


@pytest.fixture(autouse=True)
def _no_chatnoir_environment(monkeypatch):
    for name in ("CHATNOIR_API_KEY", "CHATNOIR_BASE_URL", "CHATNOIR_TIMEOUT_S", "CHATNOIR_RETRIES"):
        monkeypatch.delenv(name, raising=False)


def assert_key_absent(*texts: str) -> None:
    for text in texts:
        assert KEY not in text


def assert_key_absent_in_dir(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the stub is faithful ------------------------------------------------------------------------------------


def test_stub_speaks_the_api_the_strict_client_expects(stub):
    body = {"apikey": KEY, "query": "tenure teachers", "index": ["cw22"], "from": 0, "size": 2,
            "explain": False, "minimal": False, "search_method": "default"}
    response = requests.post(stub.base_url + "api/v1/_search", data=json.dumps(body),
                             headers={"Content-Type": "text/plain"}, timeout=2)
    parsed = SearchResponse.model_validate_json(response.text)  # chatnoir-api 3.4.2's strict model
    assert [result.trec_id for result in parsed.results] == ["clueweb22-en0001-11-00001", "clueweb22-en0001-11-00002"]
    assert parsed.meta.total_results == 3
    assert "<em>" in parsed.results[0].title.html

    second_page = requests.post(stub.base_url + "api/v1/_search", data=json.dumps({**body, "from": 2}), timeout=2)
    assert [result["trec_id"] for result in second_page.json()["results"]] == ["clueweb22-en0001-11-00003"]
    start_instead_of_from = {**{k: v for k, v in body.items() if k != "from"}, "start": 2}
    repeated = requests.post(stub.base_url + "api/v1/_search", data=json.dumps(start_instead_of_from), timeout=2)
    assert repeated.json()["results"][0]["trec_id"] == "clueweb22-en0001-11-00001"  # the 3.4.2 paging bug

    wrong_key = requests.post(stub.base_url + "api/v1/_search", data=json.dumps({**body, "apikey": "x"}), timeout=2)
    assert wrong_key.status_code == 401
    no_key_cache = requests.get(stub.base_url + "cache", params={"uuid": str(stub.documents[0].uuid), "index": "cw22"},
                                timeout=2)
    assert no_key_cache.status_code == 401


# --- settings ------------------------------------------------------------------------------------------------


def test_settings_read_the_credentials_file_then_the_environment(tmp_path, monkeypatch):
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY, "index": "cw12"}))
    assert has_credentials(tmp_path)
    settings = ChatNoirSettings.resolve(tmp_path)
    assert (settings.api_key, settings.index, settings.base_url) == (KEY, "clueweb12", "https://chatnoir.eu/")
    assert ChatNoirSettings.resolve(tmp_path, index="clueweb22/b").index == "clueweb22/b"  # --index wins

    bare = tmp_path / "bare"
    bare.mkdir()
    assert not has_credentials(bare)
    monkeypatch.setenv("CHATNOIR_API_KEY", "from-env")
    monkeypatch.setenv("CHATNOIR_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CHATNOIR_RETRIES", "0")
    from_env = ChatNoirSettings.resolve(bare, cache_dir=tmp_path / "c")
    assert (from_env.api_key, from_env.index, from_env.base_url) == ("from-env", "clueweb22/b", "http://127.0.0.1:9/")
    assert (from_env.search_method, from_env.retries, from_env.cache_dir) == ("default", 0, tmp_path / "c")


def test_settings_errors_are_one_line_and_never_show_the_key(tmp_path, monkeypatch):
    with pytest.raises(ToucheError, match="no ChatNoir API key") as no_key:
        ChatNoirSettings.resolve(tmp_path)
    (tmp_path / CREDENTIALS_FILE).write_text('{"apikey": "' + KEY + '", index: }')
    with pytest.raises(ToucheError, match="not valid JSON") as malformed:
        ChatNoirSettings.resolve(tmp_path)
    (tmp_path / CREDENTIALS_FILE).write_text('{"apikey": "' + KEY + '", "n": ' + "9" * 4301 + "}")
    with pytest.raises(ToucheError, match="not valid JSON") as huge_number:
        ChatNoirSettings.resolve(tmp_path)
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY}))
    with pytest.raises(ToucheError, match=r"unknown ChatNoir index .*clueweb12 \(cw12\), clueweb22/b \(cw22\)") \
            as bad_index:
        ChatNoirSettings.resolve(tmp_path, index="clueweb99")
    assert ChatNoirSettings.resolve(tmp_path, index=" CW22 ").index == "clueweb22/b"  # as typed into a file
    assert ChatNoirSettings.resolve(tmp_path, index="ClueWeb12").index == "clueweb12"
    monkeypatch.setenv("CHATNOIR_TIMEOUT_S", "soon")
    with pytest.raises(ToucheError, match="CHATNOIR_TIMEOUT_S") as bad_timeout:
        ChatNoirSettings.resolve(tmp_path)
    for error in (no_key, malformed, huge_number, bad_index, bad_timeout):
        assert "\n" not in str(error.value)
        assert_key_absent(str(error.value))
    settings = ChatNoirSettings(api_key=KEY)
    assert_key_absent(repr(settings), str(settings))


@pytest.mark.parametrize("variable, value, says", [
    ("CHATNOIR_TIMEOUT_S", "0", "above 0 and at most 3600, got"), ("CHATNOIR_TIMEOUT_S", "nan", "a finite number"),
    ("CHATNOIR_TIMEOUT_S", "inf", "a finite number"), ("CHATNOIR_TIMEOUT_S", "1e999", "a finite number"),
    ("CHATNOIR_TIMEOUT_S", "-1", "not negative"), ("CHATNOIR_RETRIES", "1.5", "must be an integer"),
    ("CHATNOIR_BASE_URL", "http://[bad/", "must be an http(s) URL"), ("CHATNOIR_BASE_URL", "ftp://x/", "http(s)"),
    ("CHATNOIR_BASE_URL", "http://", "http(s) URL"),
    ("CHATNOIR_BASE_URL", "http://127.0.0.1:99999/", "port must be 1 to 65535"),
    ("CHATNOIR_BASE_URL", "https://chatnoir.eu:0/", "port must be 1 to 65535"),
    ("CHATNOIR_BASE_URL", "http://exa mple.com/", "http(s) URL"),
    ("CHATNOIR_RETRIES", "1000000", "at least 0 and at most 10, got"),  # a down service would hold the run for ever
    ("CHATNOIR_RETRIES", "11", "at least 0 and at most 10, got '11'"),  # the bound itself, not a prefix of 100
])
def test_settings_from_the_environment_are_checked_before_any_request(tmp_path, monkeypatch, variable, value, says):
    monkeypatch.setenv("CHATNOIR_API_KEY", KEY)
    monkeypatch.setenv(variable, value)
    with pytest.raises(ToucheError, match=re.escape(says)):
        ChatNoirSettings.resolve(tmp_path)


def test_credentials_in_utf16_are_read_and_a_credentials_directory_is_named(tmp_path):
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY}), encoding="utf-16")
    assert ChatNoirSettings.resolve(tmp_path).api_key == KEY
    (tmp_path / CREDENTIALS_FILE).unlink()
    (tmp_path / CREDENTIALS_FILE).mkdir()
    with pytest.raises(ToucheError, match=f"{CREDENTIALS_FILE}: a directory, not a file"):
        ChatNoirSettings.resolve(tmp_path)


def test_credentials_values_must_be_strings_and_may_follow_a_bom(tmp_path, monkeypatch):
    monkeypatch.setenv("CHATNOIR_BASE_URL", " http://127.0.0.1:9/ ")  # pasted with spaces
    (tmp_path / CREDENTIALS_FILE).write_bytes(b"\xef\xbb\xbf" + json.dumps({"apikey": KEY}).encode())
    assert ChatNoirSettings.resolve(tmp_path).base_url == "http://127.0.0.1:9/"
    for value in (["x"], 123, True, {"k": "v"}):
        (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": value}))
        with pytest.raises(ToucheError, match="'apikey' must be a string"):
            ChatNoirSettings.resolve(tmp_path)
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY, "index": 22}))
    with pytest.raises(ToucheError, match="'index' must be a string, not int"):
        ChatNoirSettings.resolve(tmp_path)


# --- retrieval -----------------------------------------------------------------------------------------------


def test_a_password_in_the_base_url_is_shown_nowhere(stub, tmp_path, monkeypatch):
    """http://user:PASS@host/ as CHATNOIR_BASE_URL: ir-metadata.yml (which TIRA keeps with the run) recorded it
    whole, and so did the errors of a host that cannot be reached."""
    from app.retrieval import first_stage
    from app.settings import RunSettings

    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY}))
    monkeypatch.setenv("CHATNOIR_BASE_URL", stub.base_url.replace("://", "://proxyuser:PASS@"))
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           candidates=5, rerank_depth=2, progress=False)
    found = first_stage(settings, TOPICS[:1])
    assert found.origin == f"ChatNoir's index clueweb22/b at {stub.base_url.replace('://', '://***@')}"
    assert found.candidates["1"]
    monkeypatch.setenv("CHATNOIR_BASE_URL", "http://proxyuser:PASS@127.0.0.1:9/")
    monkeypatch.setenv("CHATNOIR_RETRIES", "0")
    with pytest.raises(ToucheError, match=r"cannot reach http://\*\*\*@127.0.0.1:9/") as error:
        first_stage(settings, TOPICS[:1])
    assert "PASS" not in str(error.value) and "PASS" not in repr(ChatNoirSettings.resolve(tmp_path))
    monkeypatch.setenv("CHATNOIR_BASE_URL", "ftp://proxyuser:PASS@127.0.0.1:9/")
    with pytest.raises(ToucheError, match=r"got 'ftp://\*\*\*@127.0.0.1:9/'"):
        ChatNoirSettings.resolve(tmp_path)
    monkeypatch.setenv("CHATNOIR_BASE_URL", "http://proxyuser:PA/SS@127.0.0.1:9/")  # the port reads "PA"
    with pytest.raises(ToucheError, match=r"got 'http://\*\*\*@127.0.0.1:9/'"):
        ChatNoirSettings.resolve(tmp_path)
    assert ChatNoirSettings(api_key=KEY, base_url="http://chatnoir.eu/?x=a@b").address == "http://chatnoir.eu/?x=a@b"


def test_a_search_path_not_found_names_the_address_setting(stub, tmp_path, monkeypatch):
    """The API's endpoint pasted as CHATNOIR_BASE_URL is searched at .../_search/api/v1/_search: its 404 said only
    "failed with HTTP 404: {...}", not which setting to mend."""
    from app.retrieval import first_stage
    from app.settings import RunSettings

    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY}))
    monkeypatch.setenv("CHATNOIR_BASE_URL", stub.base_url.replace("://", "://user:PASS@") + "api/v1/_search")
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           candidates=5, rerank_depth=2, progress=False)
    with pytest.raises(ToucheError) as error:
        first_stage(settings, TOPICS[:2])
    message = str(error.value)
    assert message.startswith('topic 1: ChatNoir search request failed with HTTP 404: {"error": "not found"} (asked '
                              f"at {stub.base_url.replace('://', '://***@')}api/v1/_search/api/v1/_search: "
                              "CHATNOIR_BASE_URL must be the service's address, which the API's paths follow)")
    assert "PASS" not in message and KEY not in message


@pytest.mark.parametrize("address, shown", [
    ("http://127.0.0.1:9/?apikey=SECRET", "http://127.0.0.1:9/?***"),  # as ChatNoir's API examples write the key
    ("https://chatnoir.eu/#SECRET", "https://chatnoir.eu/#***"),
    ("http://u:PASS@127.0.0.1:9/api?apikey=SECRET", "http://***@127.0.0.1:9/api?***"),
    ("ftp://127.0.0.1:9/?apikey=SECRET", "ftp://127.0.0.1:9/?***"),  # refused as no http(s) URL, masked the same
])
def test_an_address_with_a_query_is_refused_without_showing_it(tmp_path, monkeypatch, address, shown):
    """A key pasted into CHATNOIR_BASE_URL's query went into ir-metadata.yml and every error naming the address
    (and the requests dropped it: their paths replace the query)."""
    monkeypatch.setenv("CHATNOIR_API_KEY", KEY)
    monkeypatch.setenv("CHATNOIR_BASE_URL", address)
    with pytest.raises(ToucheError, match=f"got {re.escape(repr(shown))}") as error:
        ChatNoirSettings.resolve(tmp_path)
    assert "SECRET" not in str(error.value) and "PASS" not in str(error.value)


def test_a_service_that_caps_its_answers_is_asked_for_the_next_pages(stub, settings, caplog):
    """A service answering 100 of the 1,000 results asked, though it found 3,000, left each topic 100, silently."""
    expected = ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)
    assert len(expected["1"]) == 3
    stub.requests.clear()
    stub.page_cap = 1
    assert ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5) == expected
    assert [(r["body"]["from"], r["body"]["size"]) for r in stub.requests if r["endpoint"] == "search"] == [
        (0, 5), (1, 4), (2, 3)]
    stub.requests.clear()
    stub.ignore_from = True  # the first page again: no third one is asked, and the loss is said
    assert [c.doc.doc_id for c in ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)["1"]] == [
        expected["1"][0].doc.doc_id]
    assert stub.count("search") == 2
    assert "with 1 of the 3 results asked, and its next page repeats them (it ignores 'from')" in caplog.text


def test_a_later_page_that_fails_keeps_the_results_before_it(stub, settings, caplog, monkeypatch):
    from app import chatnoir

    stub.page_cap = 1
    backend = ChatNoirBackend(replace(settings, retries=0, cache_dir=None))
    page = backend.client._page
    monkeypatch.setattr(backend.client, "_page", lambda query, start, size: (
        page(query, start, size) if start == 0 else stub.fail("search", "500") or page(query, start, size)))
    assert len(backend.retrieve(TOPICS[:1], depth=5)["1"]) == 1
    assert "ChatNoir's page 2 for 'Should teachers get tenure?'" in caplog.text
    assert "the run keeps the 1 results before it" in caplog.text
    monkeypatch.setattr(chatnoir, "MAX_SEARCH_PAGES", 2)
    assert len(ChatNoirBackend(replace(settings, cache_dir=None)).retrieve(TOPICS[:1], depth=5)["1"]) == 2
    assert "with 2 of the 3 results asked in 2 pages" in caplog.text


def test_more_candidates_than_chatnoir_gives_search_its_most(stub, tmp_path, monkeypatch, caplog):
    """`--candidates 1001` was the error "ChatNoir depth must be between 1 and 1000", naming no option, after the
    topics were read; a run holds at most 1,000 documents a topic anyway."""
    from app.retrieval import first_stage
    from app.settings import RunSettings

    caplog.set_level(logging.INFO)
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY}))
    monkeypatch.setenv("CHATNOIR_BASE_URL", stub.base_url)
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           candidates=5000, rerank_depth=2, progress=False)
    found = first_stage(settings, TOPICS[:1])
    assert found.origin == f"ChatNoir's index clueweb22/b at {stub.base_url}"  # as ir-metadata.yml records it
    candidates = found.candidates
    assert [c.doc.doc_id for c in candidates["1"]][:1] == ["clueweb22-en0001-11-00002"]
    assert [r["body"]["size"] for r in stub.requests if r["endpoint"] == "search"] == [1000]
    assert "--candidates 5000 searches 1000" in caplog.text


def test_retrieve_returns_trec_ids_scores_and_full_texts(stub, settings, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="urllib3")  # an in-process CLI run earlier may have quietened it
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS, depth=5)

    assert list(candidates) == ["1", "2", "3"]
    assert [c.doc.doc_id for c in candidates["1"]] == [
        "clueweb22-en0001-11-00002", "clueweb22-en0001-11-00001", "clueweb22-en0001-11-00003"]
    for found in candidates.values():
        scores = [c.score for c in found]
        assert scores == sorted(scores, reverse=True) and scores[0] > 0
    tenure = candidates["1"][1].doc.text
    assert "Academic freedom needs job security." in tenure and "Teacher tenure protects" in tenure
    assert "SCRIPT-NOISE" not in tenure and "COMMENT-NOISE" not in tenure and "<" not in tenure
    assert "ünïcödé" in candidates["1"][2].doc.text

    privatize = [c.doc for c in candidates["3"]]
    assert privatize[0].doc_id == "clueweb22-en0003-33-00007"
    assert privatize[1].doc_id == str(stub.documents[7].uuid)  # no trec_id in this index: the uuid stands in

    explosions = next(c.doc for c in candidates["2"] if c.doc.doc_id == "clueweb22-en0002-22-00006")
    assert explosions.text.startswith("E-cigarette explosions")  # not in the cache: title + snippet, tags gone
    assert explosions.stand_in and not any(c.doc.stand_in for c in candidates["1"])  # its length is unknown
    assert "<em>" not in explosions.text and "Faulty batteries" in explosions.text
    assert backend.stats.fallbacks == {"HTTP 404": 1}
    assert "ChatNoir: 1 document uses title + snippet, their text could not be fetched or read (HTTP 404: 1)" \
        in caplog.text

    searches = [r for r in stub.requests if r["endpoint"] == "search"]
    assert len(searches) == 3 and all(r["content_type"] == "text/plain" for r in searches)
    assert all(r["body"]["from"] == 0 and r["body"]["size"] == 5 and "start" not in r["body"] for r in searches)
    assert stub.count("cache") == 8 == backend.stats.document_requests  # each distinct document once
    assert backend.stats.search_requests == 3 and backend.stats.retries == 0

    assert "apikey=***" in caplog.text  # urllib3 logs the cache URL at DEBUG: the key is masked there
    assert_key_absent(caplog.text)
    assert_key_absent_in_dir(settings.cache_dir)


def test_a_page_with_a_malformed_header_shows_neither_the_key_nor_a_traceback(stub, settings, caplog):
    """urllib3 warned "Failed to parse headers (url=...&apikey=KEY)", with its traceback, for each such page; the
    header watchdog cutting a stalled answer led there too."""
    settings = replace(settings, cache_dir=None)
    expected = ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)
    caplog.set_level(logging.INFO)
    stub.fail("cache", "bogus-header", times=3)
    assert ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5) == expected  # the pages are read
    assert stub.next_fault("cache") is None  # all three served
    assert not [r for r in caplog.records if r.name.startswith("urllib3") and r.levelno >= logging.INFO]
    assert "Traceback" not in caplog.text and "Failed to parse headers" not in caplog.text
    assert_key_absent(caplog.text)


def test_a_key_that_urls_encode_is_masked_as_encoded_too(fixtures, tmp_path, caplog):
    """With --debug a key such as "Ab+Cd/Ef=Gh&x y" was shown as requests sends it: apikey=Ab%2BCd%2FEf..."""
    key = "Ab+Cd/Ef=Gh&x y"
    server = chatnoir_stub.ChatNoirStub(chatnoir_stub.read_corpus(fixtures / "chatnoir" / "corpus.jsonl"),
                                        api_key=key).start()
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="urllib3")  # an in-process CLI run earlier may have quietened it
    try:
        backend = ChatNoirBackend(ChatNoirSettings(api_key=key, base_url=server.base_url, timeout_s=2))
        assert backend.retrieve(TOPICS[:1], depth=5)["1"] and server.count("cache") > 1
    finally:
        server.stop()
    assert "apikey=***" in caplog.text
    for form in (key, quote_plus(key), quote(key, safe="")):
        assert form not in caplog.text


def test_texts_cached_from_one_address_are_not_read_for_another(stub, settings, fixtures):
    """Two services serving other pages under the same ids (a stand-in, then ChatNoir) shared one cache: the second
    run ranked the first one's texts, without a word."""
    ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)
    other = chatnoir_stub.ChatNoirStub(chatnoir_stub.read_corpus(fixtures / "chatnoir" / "corpus.jsonl"),
                                       api_key=KEY).start()
    try:
        backend = ChatNoirBackend(replace(settings, base_url=other.base_url))
        backend.retrieve(TOPICS[:1], depth=5)
    finally:
        other.stop()
    assert backend.stats.cache_hits == 0 and other.count("cache") > 0
    again = ChatNoirBackend(settings)
    again.retrieve(TOPICS[:1], depth=5)
    assert again.stats.cache_hits > 0  # its own address's texts are still read


def test_a_cache_answer_in_json_is_no_page(stub, settings):
    """{"error": "document not found"} answered 200 became the document's text."""
    stub.fail("cache", "json-page")
    backend = ChatNoirBackend(replace(settings, concurrency=1))
    candidates = backend.retrieve(TOPICS[:1], depth=5)
    assert backend.stats.fallbacks["not text"] == 1
    assert not [c for c in candidates["1"] if "document not found" in c.doc.text]


def test_pages_are_read_as_main_content_or_whole_and_cached_apart(stub, settings):
    main = ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)["1"]
    tenure = next(c.doc for c in main if c.doc.doc_id == "clueweb22-en0001-11-00001")
    assert tenure.text.startswith("Teacher tenure protects academic freedom\nTenure protects teachers")
    assert "Home | About" not in tenure.text  # the menu is not main content

    full = ChatNoirBackend(replace(settings, page_text="full"))
    whole = next(c.doc for c in full.retrieve(TOPICS[:1], depth=5)["1"] if c.doc.doc_id == tenure.doc_id)
    assert whole.text.startswith("Home | About\nTeacher tenure protects academic freedom\nTenure protects teachers")
    assert full.stats.cache_hits == 0  # the main-content texts on disk are not the whole pages


def test_an_interrupted_run_resumes_from_the_disk_cache(stub, settings):
    first = ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    stub.requests.clear()
    again = ChatNoirBackend(settings)
    second = again.retrieve(TOPICS, depth=5)
    assert second == first
    assert again.stats.cache_hits == 7
    assert stub.count("cache") == 1  # only the page the cache endpoint never had is asked for again


def test_one_backend_caches_the_texts_of_each_retrieval(stub, settings):
    backend = ChatNoirBackend(settings)
    assert backend.retrieve([], depth=5) == {}
    backend.retrieve(TOPICS[:1], depth=5)
    cached = len(list(settings.cache_dir.rglob("*.txt")))
    backend.retrieve(TOPICS[1:], depth=5)
    assert 0 < cached < len(list(settings.cache_dir.rglob("*.txt")))


def test_a_damaged_cached_text_is_fetched_again_never_read(stub, settings, caplog):
    first = ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    files = sorted(settings.cache_dir.rglob("*.txt"))
    files[0].write_bytes(b"")
    files[1].write_bytes(files[1].read_bytes()[:-5])  # cut: its digest no longer fits
    files[2].write_bytes(b"\xff\xfe\x00 garbage")
    stub.requests.clear()
    again = ChatNoirBackend(settings)
    assert again.retrieve(TOPICS, depth=5) == first
    assert again.stats.cache_hits == 4 and stub.count("cache") == 4  # 3 damaged + the page the stub never had
    assert "ChatNoir: 3 cached texts in" in caplog.text and "were damaged and fetched again" in caplog.text


def test_a_cached_text_that_is_no_regular_file_or_too_long_is_fetched_again(stub, settings, caplog):
    """A FIFO held the run for ever; a link to /dev/zero took 6 GB, then lost the page to a MemoryError."""
    first = ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    files = sorted(settings.cache_dir.rglob("*.txt"))
    files[0].unlink()
    os.mkfifo(files[0])
    files[1].unlink()
    files[1].symlink_to("/dev/zero")
    files[2].write_bytes(files[2].read_bytes() + b" " * 100_000)
    stub.requests.clear()
    again = ChatNoirBackend(settings)
    assert again.retrieve(TOPICS, depth=5) == first
    assert again.stats.cache_hits == 4 and stub.count("cache") == 4
    assert "ChatNoir: 3 cached texts in" in caplog.text and "were damaged and fetched again" in caplog.text


def test_a_cache_that_cannot_take_a_text_costs_the_caching_not_the_text(stub, settings, caplog):
    expected = ChatNoirBackend(replace(settings, cache_dir=None)).retrieve(TOPICS, depth=5)
    settings.cache_dir.parent.mkdir(parents=True, exist_ok=True)
    settings.cache_dir.write_text("a file where the cache would go")
    backend = ChatNoirBackend(settings)
    assert backend.retrieve(TOPICS, depth=5) == expected
    assert backend.stats.fallbacks == {"HTTP 404": 1}  # the page the stub never had, as without a cache
    assert caplog.text.count("cannot cache page texts in") == 1


def test_the_page_cache_survives_one_entry_that_is_a_directory_and_sweeps_a_killed_runs_temporaries(tmp_path):
    """A directory under one page's name stopped the caching of every page for the run ("is a directory"); the
    temporaries of a run killed while writing (SIGKILL) were never removed."""
    import os

    from app.chatnoir import TextCache

    cache = TextCache(tmp_path, "clueweb12")
    cache.put("a", "text a")
    (cache._path("b")).mkdir()
    cache.put("b", "text b")
    cache.put("c", "text c")
    assert cache.unwritable is None and cache.get("c") == "text c" and cache.get("b") is None
    stale = cache.directory / ".c.v1.txt.abc.tmp"
    stale.write_text("cut")
    os.utime(stale, (1, 1))
    assert TextCache(tmp_path, "clueweb12").get("a") == "text a" and not stale.exists()


def test_text_depth_limits_the_documents_fetched(stub, settings):
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS, depth=5, text_depth=1)
    assert stub.count("cache") == 3
    assert "Schools should reward good teachers" in candidates["1"][0].doc.text
    assert "Academic freedom" not in candidates["1"][1].doc.text  # below text_depth: title + snippet
    assert candidates["1"][1].doc.text.startswith("Teacher tenure protects academic freedom")
    assert [c.doc.stand_in for c in candidates["1"][:2]] == [False, True]


def test_a_page_fetched_without_text_is_read_as_its_title_and_snippet_not_stood_in_for(stub, settings):
    """A page of scripts only (known to show no text, unlike an empty answer) took the median length and quality
    of the pages read (`rerank.typical_where_unknown`), as a page whose fetch failed does
    (`test_text_depth_limits_the_documents_fetched`), and ranked above pages holding a whole argument."""
    from dataclasses import replace as replaced

    stub.documents[0] = replaced(stub.documents[0], html="<html><body><script>var x = 1;</script></body></html>")
    backend = ChatNoirBackend(settings)
    candidates = {c.doc.doc_id: c.doc for c in backend.retrieve(TOPICS[:1], depth=5)["1"]}
    empty = candidates[stub.documents[0].trec_id]
    assert not empty.stand_in and empty.text and "var x" not in empty.text
    assert backend.stats.fallbacks == {"page without text": 1}
    assert not any(doc.stand_in for doc in candidates.values())
    stub.documents[0] = replaced(stub.documents[0], html=" \n")  # no page: what it holds is unknown
    backend = ChatNoirBackend(replace(settings, cache_dir=None))
    candidates = {c.doc.doc_id: c.doc for c in backend.retrieve(TOPICS[:1], depth=5)["1"]}
    assert candidates[stub.documents[0].trec_id].stand_in and backend.stats.fallbacks == {"empty answer": 1}


def test_depth_is_one_request_of_at_most_1000(stub, settings):
    with pytest.raises(ToucheError, match="between 1 and 1000"):
        ChatNoirBackend(settings).retrieve(TOPICS, depth=1001)
    assert stub.requests == []
    ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=1000)
    assert [r["body"]["size"] for r in stub.requests if r["endpoint"] == "search"] == [1000]


# --- faults --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["429", "500", "504", "hang", "malformed", "gateway-html"])
def test_retryable_search_faults_are_retried_then_succeed(stub, settings, fault, caplog):
    expected = ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    stub.requests.clear()
    stub.fail("search", fault, times=2)
    backend = ChatNoirBackend(settings)
    started = time.perf_counter()
    assert backend.retrieve(TOPICS, depth=5) == expected
    assert time.perf_counter() - started < 2.0
    assert stub.count("search") == 5 and backend.stats.retries == 2
    assert "retry 2 of 2" in caplog.text
    assert_key_absent(caplog.text)


@pytest.mark.parametrize("fault", ["malformed", "gateway-html"])
def test_an_unusable_search_answer_is_retried_with_backoff(stub, settings, fault, monkeypatch):
    """The client's own retries of a 200 answer that is no JSON wait as urllib3's do: none before the first, then
    `backoff_s` x 2 plus up to `backoff_s` of jitter (retried at once, a gateway in trouble was asked again at once)."""
    import app.chatnoir

    slept = []
    monkeypatch.setattr(app.chatnoir.time, "sleep", slept.append)
    stub.fail("search", fault, times=2)
    ChatNoirBackend(replace(settings, backoff_s=1.0)).retrieve(TOPICS[:1], depth=5)
    assert slept[0] == 0.0 and 2.0 <= slept[1] <= 3.0, slept


@pytest.mark.parametrize("fault, message", [
    ("429", "after 3 attempts: HTTP 429"),
    ("500", "after 3 attempts: HTTP 500"),
    ("hang", "after 3 attempts: no answer within 0.3 s"),
    ("gateway-html", r"with an HTTP 200 answer that is not JSON \(55 bytes\), the last of 3 attempts"),
])
def test_search_faults_that_outlast_the_retries_in_every_topic_fail_clearly(stub, settings, fault, message,
                                                                          monkeypatch):
    monkeypatch.setattr("app.chatnoir.MAX_OUTAGE_S", 0.0)  # no search answered for 0 s: the outage is long enough
    stub.fail("search", fault, times=9)  # 3 topics, 3 attempts each
    started = time.perf_counter()
    with pytest.raises(ToucheError, match=message) as error:
        ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    assert time.perf_counter() - started < 6.0
    assert str(error.value).startswith("topic 3: ") and "\n" not in str(error.value)
    verdict = {"429": "ChatNoir refuses more searches as too many requests: this API key's quota may be spent",
               "500": "ChatNoir seems down",
               "hang": "ChatNoir seems down, or slower than CHATNOIR_TIMEOUT_S allows",
               "gateway-html": "ChatNoir seems down, or what answers at its address (CHATNOIR_BASE_URL) is not "
                               "ChatNoir's search API"}[fault]
    assert re.search(r"the searches of the first 3 topics failed, none answered for \d+ s: ", str(error.value))
    assert verdict in str(error.value) and (fault == "429") != ("seems down" in str(error.value))
    assert stub.count("search") == 9 and stub.count("cache") == 0
    assert not settings.cache_dir.exists()
    assert_key_absent(str(error.value))


def test_an_outage_shorter_than_max_outage_costs_no_topic(stub, settings, caplog):
    """A burst of errors of 45 s failed 3 topics in a row and ended the run, though each topic's next request would
    have been answered."""
    stub.fail("search", "500", times=9)  # 3 topics, 3 attempts each, within a second
    candidates = ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    assert list(candidates) == ["1", "2", "3"] and all(candidates.values())
    assert caplog.text.count("asked again after the other topics") == 3


def test_an_outage_over_the_last_topics_ends_the_run_once_it_lasts(stub, settings, monkeypatch):
    """The outage rule held in the first round only: ChatNoir down from the 45th of 50 topics on gave a run of 44."""
    monkeypatch.setattr("app.chatnoir.MAX_OUTAGE_S", 0.5)
    monkeypatch.setattr("app.chatnoir.OUTAGE_PAUSE_S", 0.1)
    backend = ChatNoirBackend(settings)
    search = backend.client.search

    def down_after_the_first(query, size):  # every search after the first fails
        answer = search(query, size)
        stub.fail("search", "500", times=10_000)
        return answer

    monkeypatch.setattr(backend.client, "search", down_after_the_first)
    with pytest.raises(ToucheError, match=r"^topic 1: .*no search answered for \d+ s, 4 topics' searches failing: "
                                          "ChatNoir seems down"):
        backend.retrieve(TOPICS[:1] + [Topic(str(n), f"Is {n} down?") for n in (4, 5, 6)], depth=5)


@pytest.mark.parametrize("order, fault", [((1, 7, 2, 8, 3, 9), "gateway-html"), ((1, 2, 3, 7, 8, 9), "gateway-html"),
                                          ((1, 7, 8, 9, 2, 3), "hang")])
def test_queries_that_always_fail_cost_their_topics_not_the_run(stub, settings, monkeypatch, order, fault):
    """Asked again in a row, topics whose queries always fail looked like an outage and ended the run; so did three
    whose searches time out, which outlast MAX_OUTAGE_S alone. A topic answered before, asked again, tells them
    apart."""
    monkeypatch.setattr("app.chatnoir.MAX_OUTAGE_S", 0.5)
    monkeypatch.setattr("app.chatnoir.OUTAGE_PAUSE_S", 0.1)
    topics = {n: TOPICS[n - 1] if n <= 3 else Topic(str(n), f"Is {n} broken?") for n in order}
    for n in (7, 8, 9):
        stub.fail_query(topics[n].title, fault)
    candidates = ChatNoirBackend(settings).retrieve(list(topics.values()), depth=5)
    assert list(candidates) == ["1", "2", "3"]


def test_an_outage_over_the_last_topic_is_waited_out(stub, settings, monkeypatch, caplog):
    """A minute of errors over the last topic cost it: it was asked again at once, and failed again."""
    monkeypatch.setattr("app.chatnoir.OUTAGE_PAUSE_S", 0.1)
    backend = ChatNoirBackend(settings)
    search = backend.client.search

    def down_after_the_third(query, size):  # the last topic's 3 attempts fail, and the first ask of topic 1
        answer = search(query, size)
        if query == TOPICS[2].title:
            stub.fail("search", "500", times=6)
        return answer

    monkeypatch.setattr(backend.client, "search", down_after_the_third)
    last = Topic("4", "Is the last topic answered?")
    candidates = backend.retrieve(TOPICS + [last], depth=5)
    assert list(candidates) == ["1", "2", "3", "4"]
    assert "asking topic 1 again every 0.1 s until it is answered" in caplog.text


def test_an_address_unreachable_after_answering_is_waited_for_as_an_outage(stub, settings, monkeypatch):
    """ChatNoir restarting (its port refusing connections for 30 s) after the first topics ended the run at the
    next topic, where 70 s of 503s were waited out."""
    monkeypatch.setattr("app.chatnoir.OUTAGE_PAUSE_S", 0.05)
    backend = ChatNoirBackend(settings)
    search, calls = backend.client.search, []

    def restarting(query, size):
        calls.append(query)
        if 2 <= len(calls) <= 6:
            raise ChatNoirRequestError("ChatNoir search request failed: cannot reach it (NewConnectionError)",
                                       "unreachable")
        return search(query, size)

    monkeypatch.setattr(backend.client, "search", restarting)
    assert list(backend.retrieve(TOPICS, depth=5)) == ["1", "2", "3"]
    calls[:] = ["never answered"]  # the address is wrong: said at the first topic, not after MAX_OUTAGE_S
    with pytest.raises(ToucheError, match="^topic 1: ChatNoir search request failed: cannot reach"):
        ChatNoirBackend.retrieve(backend, TOPICS, depth=5)


def test_retries_of_one_search_are_shared_by_the_loops_that_retry_it(stub, settings):
    """A cut body, an answer that is no JSON, a cut body: each loop counted its own retries (4 requests where 3 were
    allowed; up to 25 with 4 retries, each with urllib3's own)."""
    for fault in ("cut", "gateway-html", "cut"):
        stub.fail("search", fault)
    client = ChatNoirClient(replace(settings, retries=2), ChatNoirStats())
    with pytest.raises(ChatNoirRequestError, match="search request failed after 3 attempts: the answer broke off"):
        client.search("teachers tenure", 5)
    assert stub.count("search") == 3


def test_an_answer_with_malformed_headers_is_asked_again_then_said_so(stub, settings):
    """Two Content-Length headers that differ: urllib3 retries none, so one such answer ended the search, which
    said it "cannot reach" the ChatNoir that had answered."""
    stub.fail("search", "two-lengths")
    client = ChatNoirClient(replace(settings, retries=2), ChatNoirStats())
    assert client.search("teachers tenure", 5) and stub.count("search") == 2
    stub.fail("search", "two-lengths", times=3)
    with pytest.raises(ChatNoirRequestError, match=r"search request failed after 3 attempts: http://127\.0\.0\.1:"
                                                   r"\d+/ answered with malformed headers \(InvalidHeader\)$"):
        client.search("teachers tenure", 5)


def test_a_search_answered_without_a_results_list_is_asked_again(stub, settings):
    """JSON without "results" (null, a dict) was an error at once, though the README lists it among the failures
    retried."""
    stub.fail("search", "no-results")
    assert ChatNoirClient(settings, ChatNoirStats()).search("teachers tenure", 5)
    assert stub.count("search") == 2
    stub.fail("search", "no-results", times=3)
    with pytest.raises(ChatNoirRequestError, match="without a 'results' list, the last of 3 attempts"):
        ChatNoirClient(settings, ChatNoirStats()).search("teachers tenure", 5)


def test_a_topic_whose_search_fails_is_asked_again_after_the_others(stub, settings, caplog):
    expected = ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    stub.fail("search", "500", times=3)  # topic 1's three attempts
    assert ChatNoirBackend(settings).retrieve(TOPICS, depth=5) == expected
    assert "topic 1: ChatNoir search request failed after 3 attempts: HTTP 500; asked again" in caplog.text


def test_a_topic_whose_search_keeps_failing_costs_that_topic_alone(stub, settings, caplog):
    stub.fail_query(TOPICS[1].title, "gateway-html")
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS, depth=5)
    assert list(candidates) == ["1", "3"] and backend.stats.topics == 2
    assert "topic 2: ChatNoir answered the search for 'Is vaping with e-cigarettes safe?' with an HTTP 200 " \
           "answer that is not JSON" in caplog.text and "the run goes on without it" in caplog.text
    assert [record.levelname for record in caplog.records if "goes on without it" in record.message] == ["ERROR"]
    only = [Topic("2", TOPICS[1].title)]
    with pytest.raises(ToucheError, match="no topic's search succeeded"):
        ChatNoirBackend(settings).retrieve(only, depth=5)


@pytest.mark.parametrize("fault, message", [
    ("401", "rejected the API key"),
    ("403", "blocked this IP address"),
])
def test_search_faults_the_api_does_not_retry_fail_at_once(stub, settings, fault, message):
    stub.fail("search", fault)
    with pytest.raises(ToucheError, match=message) as error:
        ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    assert stub.count("search") == 1 and stub.count("cache") == 0
    assert not settings.cache_dir.exists()
    assert_key_absent(str(error.value))


def test_an_answer_that_trickles_in_fails_by_the_time_out_not_per_read(stub, settings):
    """requests' timeout bounds each read: a server sending a byte within each would hold the run for ever."""
    stub.hang_s = 2.0  # a byte every 0.1 s, each read well within the 0.3 s time-out
    stub.fail_query(TOPICS[0].title, "trickle")
    started = time.monotonic()
    with pytest.raises(ToucheError, match=r"did not arrive within 0\.3 s"):
        ChatNoirBackend(replace(settings, retries=0)).retrieve(TOPICS[:1], depth=5)
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("fault", ["trickle-status", "trickle-headers"])
def test_headers_that_trickle_in_fail_by_the_time_out_not_per_read(stub, settings, fault):
    """A byte every 0.2 s: each read in time, the headers never within the 0.3 s time-out. Cut off amid the
    headers, http.client may end them quietly: that is no answer either."""
    stub.hang_s = 4.0
    stub.fail_query(TOPICS[0].title, fault)
    started = time.monotonic()
    with pytest.raises(ToucheError, match=r"search request failed after 1 attempt: no answer within 0\.3 s"):
        ChatNoirBackend(replace(settings, retries=0)).retrieve(TOPICS[:1], depth=5)
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("endpoint", ["search", "cache"])
def test_a_body_whose_bytes_decode_to_nothing_fails_by_the_time_out(stub, settings, endpoint):
    """Empty deflate blocks in a gzipped body: urllib3's read1 reads on until something decodes, so the deadline
    checked between reads never came and the run never ended."""
    stub.hang_s = 4.0  # a block every 0.2 s
    if endpoint == "search":
        stub.fail_query(TOPICS[0].title, "gzip-trickle")
    else:
        stub.fail("cache", "gzip-trickle", times=10)
    started = time.monotonic()
    backend = ChatNoirBackend(replace(settings, retries=0, cache_dir=None))
    if endpoint == "search":
        with pytest.raises(ToucheError, match=r"did not arrive within 0\.3 s"):
            backend.retrieve(TOPICS[:1], depth=5)
    else:
        assert all(candidate.doc.stand_in for candidate in backend.retrieve(TOPICS[:1], depth=5)["1"])
    assert time.monotonic() - started < 3.0


def test_a_redirect_whose_address_urllib3_reads_as_another_host_is_not_followed():
    """urlsplit reads "http://evil.example\\@chatnoir.eu/" as chatnoir.eu, urllib3 (which connects) as
    evil.example: the redirect was followed, and the key went there."""
    from app.chatnoir import _redirect_target

    response = requests.Response()
    response.status_code, response.headers["Location"] = 307, "http://evil.example\\@chatnoir.eu/cache?apikey=k"
    with pytest.raises(ChatNoirRequestError, match=r"redirects \(HTTP 307\) to http://evil\.example"):
        _redirect_target("http://chatnoir.eu/cache", response, ChatNoirSettings(KEY), "page")


@pytest.mark.parametrize("base", ["https://bücher.example/", "http://[fe80::1%25eth0]:8080/", "https://Chatnoir.EU/"])
def test_a_redirect_on_the_same_host_is_followed_whatever_form_the_host_takes(base):
    """urllib3 reads an IDNA host as its xn-- form: compared with the origin as urlsplit reads it, a redirect on the
    same host was refused."""
    from app.chatnoir import _redirect_target

    for location in ("/cache?x=1", base + "cache?x=1"):
        response = requests.Response()
        response.status_code, response.headers["Location"] = 307, location
        assert _redirect_target(base + "api/v1/_search", response, ChatNoirSettings(KEY, base_url=base), "search")


def test_what_a_server_answers_reaches_the_log_without_terminal_controls():
    """An error page's ESC sequences (a title set, the screen cleared), BEL and bidirectional overrides went to
    stderr as the server wrote them."""
    from app.chatnoir import ChatNoirClient, ChatNoirStats, _redirect_target

    client = ChatNoirClient(ChatNoirSettings(api_key=KEY), ChatNoirStats())
    assert client._excerpt("Bad \x1b]0;owned\x07request\x1b[2J \u202eevil") == "Bad ]0;ownedrequest[2J evil"
    response = requests.Response()
    response.status_code, response.headers["Location"] = 307, "https://other.example/\x1b[2Jx"
    with pytest.raises(ChatNoirRequestError) as error:
        _redirect_target("https://chatnoir.eu/cache", response, ChatNoirSettings(KEY), "page")
    assert "\x1b" not in str(error.value)


def test_a_redirect_to_another_host_is_not_followed_and_says_where_it_points(stub, settings):
    """Followed, it would send the key to whatever host it names (and a 301 turns the search into a GET)."""
    stub.fail("search", "redirect")
    port = stub.base_url.rstrip("/").rsplit(":", 1)[1]
    with pytest.raises(ToucheError, match=r"topic 1: ChatNoir's address redirects \(HTTP 307\) to "
                                          rf"http://localhost:{port}/api/v1/_search: set CHATNOIR_BASE_URL to "
                                          rf"http://localhost:{port}/ \(a redirect to another host is not") as error:
        ChatNoirBackend(settings).retrieve(TOPICS, depth=5)
    assert stub.count("search") == 1
    assert_key_absent(str(error.value))
    stub.fail("search", "redirect-bad")
    with pytest.raises(ToucheError, match=r"ChatNoir's address redirects to an unreadable address"):
        ChatNoirBackend(settings).retrieve(TOPICS, depth=5)


def test_a_redirect_elsewhere_names_its_address_without_the_key_in_any_form_urls_write_it():
    """A key with a slash, percent-escaped in the path it points to, was shown as written there."""
    from app.chatnoir import _redirect_target

    key = "k/ey w+th"
    for written in (quote(key, safe=""), quote(key, safe="").lower(), quote_plus(key)):
        response = requests.Response()
        response.status_code, response.headers["Location"] = 307, f"https://other.example/{written}/cache?x=1"
        with pytest.raises(ChatNoirRequestError) as error:
            _redirect_target("https://chatnoir.eu/cache", response, ChatNoirSettings(key), "page")
        assert str(error.value).startswith("ChatNoir's address redirects (HTTP 307) to https://other.example/***/cache")


def test_a_redirect_on_the_same_host_is_followed_with_the_search_body(stub, settings):
    stub.fail("search", "redirect-same")
    assert len(ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)["1"]) == 3
    assert stub.count("search") == 2


def test_pages_redirected_elsewhere_keep_their_snippets_and_are_said_once(stub, settings, caplog):
    stub.fail("cache", "redirect", times=100)
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS[:1], depth=5)["1"]
    assert all(c.doc.text for c in candidates) and backend.stats.fallbacks["redirected"] == stub.count("cache")
    assert caplog.text.count("ChatNoir's cache: ChatNoir's address redirects (HTTP 307) to http://localhost:") == 1
    assert "CHATNOIR_BASE_URL" not in caplog.text  # set to the cache's new address, it sent the searches there too


def test_a_page_redirected_on_its_host_to_an_address_without_the_key_keeps_the_key(stub, settings):
    """The address's query replaced the request's, the key too: every page was refused (403, "ChatNoir blocked
    this IP address") and read as its snippet."""
    expected = ChatNoirBackend(replace(settings, cache_dir=None)).retrieve(TOPICS[:1], depth=5)
    for suffix in ("", "&apikey="):  # no key; an empty one, which a server reading the first value took
        stub.requests.clear()
        stub.redirect_suffix = suffix
        stub.fail("cache", "redirect-keyless", times=3)
        backend = ChatNoirBackend(replace(settings, cache_dir=None))
        assert backend.retrieve(TOPICS[:1], depth=5) == expected
        assert not backend.stats.fallbacks and stub.count("cache") == 6


def test_the_header_deadline_holds_through_an_http_proxy_too():
    from app.chatnoir import _POOLS, _Adapter

    assert _Adapter().proxy_manager_for("http://127.0.0.1:9").pool_classes_by_scheme == _POOLS
    assert _Adapter().poolmanager.pool_classes_by_scheme == _POOLS


def test_an_https_proxy_trickling_its_answer_to_connect_fails_by_the_time_out(monkeypatch):
    """http.client reads a proxy's answer to CONNECT (an https:// address, chatnoir.eu's too) during the connect,
    with no bound on its time: a proxy sending a byte every 0.1 s held the run for ever."""
    import threading

    from app.chatnoir import ChatNoirClient, ChatNoirStats

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(4096)  # the CONNECT request
            for byte in b"HTTP/1.1 200 Connection established\r\n" + b"X-Header: y\r\n" * 100:
                if stop.wait(0.1):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:  # the client gave up
                    return

    threading.Thread(target=trickle, daemon=True).start()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = ChatNoirClient(ChatNoirSettings(api_key=KEY, base_url="https://chatnoir.example/", timeout_s=0.5,
                                             retries=0), ChatNoirStats())
    started = time.monotonic()
    try:
        with pytest.raises(ChatNoirRequestError):
            client.search("tea", 5)
        assert time.monotonic() - started < 5.0
    finally:
        stop.set()
        listener.close()


def test_a_proxy_that_fails_is_named_not_chatnoir(monkeypatch):
    from urllib3.exceptions import ProxyError

    from app.chatnoir import _failure

    problem, reason = _failure(ProxyError("Unable to connect to proxy", OSError("refused")), ChatNoirSettings(KEY))
    assert "through the HTTP proxy" in problem and reason == "unreachable"


def test_a_page_with_a_byte_order_mark_is_read_by_it(stub, settings):
    """A UTF-16 page served as text/html without a charset was 'not text': its BOM says how to read it."""
    plain = {c.doc.doc_id: c.doc.text for c in ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)["1"]}
    stub.fail("cache", "utf16", times=10)
    backend = ChatNoirBackend(replace(settings, cache_dir=settings.cache_dir.with_name("cache-utf16")))
    assert {c.doc.doc_id: c.doc.text for c in backend.retrieve(TOPICS[:1], depth=5)["1"]} == plain
    assert not backend.stats.fallbacks


def test_an_answer_that_breaks_off_is_asked_again(stub, settings, caplog):
    stub.fail("search", "cut")
    backend = ChatNoirBackend(settings)
    assert len(backend.retrieve(TOPICS[:1], depth=5)["1"]) == 3
    assert "the answer broke off" in caplog.text and backend.stats.retries == 1
    stub.fail_query(TOPICS[0].title, "cut")
    with pytest.raises(ToucheError, match=r"search request failed after 3 attempts: the answer broke off"):
        ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)


def test_a_wrong_key_is_a_clear_error(stub, settings):
    wrong = ChatNoirSettings(api_key="not-the-key", base_url=stub.base_url, retries=2, backoff_s=0.01)
    with pytest.raises(ToucheError, match=r"topic 1: ChatNoir rejected the API key \(HTTP 401\)"):
        ChatNoirBackend(wrong).retrieve(TOPICS, depth=5)
    assert stub.count("search") == 1


def test_unreachable_chatnoir_is_one_clear_error():
    offline = ChatNoirSettings(api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}/", retries=1, backoff_s=0.01)
    with pytest.raises(ToucheError, match=r"after 2 attempts: cannot reach http://127\.0\.0\.1:\d+/") as error:
        ChatNoirBackend(offline).retrieve(TOPICS, depth=5)
    assert_key_absent(str(error.value))


def test_a_page_waits_at_most_10_s_for_a_retry_after_a_search_60(settings):
    """A cache endpoint answering every page 429 with Retry-After held a 3-topic run 16 minutes at 60 s a wait."""
    from urllib3.response import HTTPResponse

    from app.chatnoir import ChatNoirStats, _Retry

    answer = HTTPResponse(headers={"Retry-After": "999999"}, status=429)
    waits = {what: _Retry.policy(what, settings, ChatNoirStats()).get_retry_after(answer)
             for what in ("search", "document")}
    assert waits == {"search": 60.0, "document": 10.0}
    # Past Python's 4,300 digits int() refuses the seconds: a ValueError the run took for an unreadable redirect.
    for malformed in ("9" * 5000, "soon"):
        answer = HTTPResponse(headers={"Retry-After": malformed}, status=503)
        assert _Retry.policy("search", settings, ChatNoirStats()).get_retry_after(answer) is None


def test_https_to_a_plain_http_server_says_tls(stub):
    """It read "cannot reach ... (SSLError)", with no hint of why."""
    tls = ChatNoirSettings(api_key=KEY, base_url=stub.base_url.replace("http:", "https:"), retries=0)
    with pytest.raises(ToucheError, match=r"no TLS connection to https://127\.0\.0\.1:\d+/ \(SSLError: a "
                                          "certificate that cannot be verified, or a server that speaks no https"):
        ChatNoirBackend(tls).retrieve(TOPICS, depth=5)


def test_an_answer_cut_at_the_bound_says_so_not_its_byte_count(monkeypatch):
    """An endless chunked or gzip-bombed search answer read "malformed JSON (67108864 bytes)"."""
    from app import chatnoir

    response = requests.Response()
    response._content = b"[" * chatnoir.MAX_BODY_BYTES
    assert chatnoir._size(response) == "cut at 64 MB, the most read"
    response._content = b"<html>"
    assert chatnoir._size(response) == "6 bytes"


def test_results_missing_optional_fields_are_kept_and_without_ids_dropped(stub, settings, caplog):
    stub.fail("search", "missing-fields")  # lang and cache_uri absent: chatnoir-api's strict model rejects the page
    stub.fail("search", "missing-id")
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS[:2], depth=5)
    assert len(candidates["1"]) == 3
    assert [c.doc.doc_id for c in candidates["2"]] == [
        "clueweb22-en0002-22-00005", "clueweb22-en0002-22-00006", str(stub.documents[7].uuid),
        "clueweb22-en0001-11-00001"]
    assert backend.stats.dropped_results == 1
    assert "dropped 1 results without a usable document id" in caplog.text


def test_padded_ids_are_stripped_and_a_document_named_twice_is_listed_once(settings, monkeypatch):
    """A trec_id with a space or line break at an end lost its result ("without a usable document id"); a result
    naming a document by its uuid alone was listed beside the one naming it by trec_id."""
    from app.chatnoir import index_prefix

    backend = ChatNoirBackend(replace(settings, cache_dir=None))
    first = "clueweb22-en0000-00-00000"
    uuid = uuid5(NAMESPACE_URL, f"{index_prefix(settings.index)}:{first}")
    results = [{"score": 3.0, "trec_id": f" {first}\n"}, {"score": 2.0, "uuid": str(uuid)},
               {"score": 1.0, "trec_id": "clueweb22-en0000-00-00001\u00a0"}]
    monkeypatch.setattr(backend.client, "search", lambda query, size: results)
    candidates = backend.retrieve(TOPICS[:1], depth=5, text_depth=0)["1"]
    assert [c.doc.doc_id for c in candidates] == [first, "clueweb22-en0000-00-00001"]
    assert backend.stats.dropped_results == 0
    results[:2] = results[1::-1]  # the uuid alone first: the run names it by the trec_id the qrels name, in its place
    backend = ChatNoirBackend(replace(settings, cache_dir=None))
    monkeypatch.setattr(backend.client, "search", lambda query, size: results)
    candidates = backend.retrieve(TOPICS[:1], depth=5, text_depth=0)["1"]
    assert backend.stats.uuid_ids == 0
    assert [(c.doc.doc_id, c.score) for c in candidates] == [(first, 2.0), ("clueweb22-en0000-00-00001", 1.0)]


def test_a_result_scored_nan_ranks_its_topic_by_chatnoirs_order(stub, settings, caplog):
    """JSON's NaN would write "nan" into the run and unscale the topic's other scores in the fusion; dropping such
    results lost every one of a topic whose scores were all strings, NaN or booleans ("found nothing", then "the run
    is empty"). As a re-rank file's, a topic's scores rank it only where each is a finite number."""
    expected = [c.doc.doc_id for c in ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)["1"]]
    stub.fail("search", "nan-score")
    backend = ChatNoirBackend(replace(settings, cache_dir=None))
    candidates = backend.retrieve(TOPICS[:1], depth=5)["1"]
    assert backend.stats.dropped_results == 0 and backend.stats.unscored_topics == 1
    assert [c.doc.doc_id for c in candidates] == expected
    assert [c.score for c in candidates] == [1 / (1 + i / 100) for i in range(len(expected))]
    assert "1 topics ranked by ChatNoir's order" in caplog.text


def test_titles_snippets_and_ids_are_bounded_before_they_are_read(settings, monkeypatch):
    """A title of 160,000 attributes (1.5 MB) held lxml for 220 s; a trec_id of 30 MB a topic made a 90 MB run."""
    from app import chatnoir

    read = []
    monkeypatch.setattr(chatnoir, "html_to_text", lambda markup: read.append(len(markup)) or markup[:5])
    backend = ChatNoirBackend(settings)
    hostile = "<p " + " ".join(f"a{i}=x" for i in range(160_000)) + ">tenure"
    hit = backend._hit({"score": 1.0, "trec_id": "clueweb12-0000tw-00-00000", "title": hostile, "snippet": "s"})
    assert hit is not None and read == [chatnoir.MAX_PREVIEW_CHARS + 3, 1]  # its "<" opens no closed tag: "&lt;"
    long_id = "clueweb12-" + "0" * chatnoir.MAX_ID_CHARS
    assert backend._hit({"score": 1.0, "trec_id": long_id, "uuid": str(uuid5(NAMESPACE_URL, "x"))}) is None


def test_a_less_than_sign_in_a_title_is_text_and_highlights_are_markup(settings):
    """'Why x<y and teachers' read as markup was 'Why x': the rest of the title went."""
    hit = ChatNoirBackend(settings)._hit({"score": 1.0, "trec_id": "clueweb12-0000tw-00-00000",
                                          "title": "Why x<y and <em>teachers</em>", "snippet": "p<q>r <EM>tenure</EM>"})
    assert hit is not None and hit.preview == "Why x<y and teachers p<q>r tenure"
    hit = ChatNoirBackend(settings)._hit({"score": 1.0, "trec_id": "clueweb12-0000tw-00-00000",
                                          "title": "Is a <b and c> d true?"})
    assert hit is not None and hit.preview == "Is a <b and c> d true?"  # no highlighting tag: all of it is text


def test_a_title_or_snippet_referring_to_control_characters_is_read(settings):
    """"Laptop<br>&#1;desktop" as a result's title raised in lxml and ended the whole run."""
    hit = ChatNoirBackend(settings)._hit({"score": 1.0, "trec_id": "clueweb12-0000tw-00-00000",
                                          "title": "Laptop<br>&#1;desktop", "snippet": "<p>tenure&#12;</p>"})
    assert hit is not None and hit.preview.split() == ["Laptop", "desktop", "tenure"]


def test_a_search_answer_after_a_byte_order_mark_is_read(stub, settings):
    """JSON after a UTF-8 byte order mark is JSON still (RFC 8259 lets a reader ignore the mark); requests' .json()
    called it malformed, so the search was retried and the topic lost."""
    stub.fail("search", "bom")
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS[:1], depth=5)
    assert backend.stats.retries == 0 and candidates["1"]
    assert candidates == ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)


def test_document_faults_are_retried_or_fall_back_to_the_snippet(stub, settings):
    stub.fail("cache", "500")
    stub.fail("cache", "hang")
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS[:1], depth=5)
    assert backend.stats.retries == 2 and backend.stats.fallbacks == {}

    stub.fail("cache", "401", times=10)
    refused = ChatNoirBackend(ChatNoirSettings(api_key=KEY, base_url=stub.base_url, retries=0))
    candidates = refused.retrieve(TOPICS[1:2], depth=5)
    assert refused.stats.fallbacks == {"HTTP 401": 5}
    assert all(c.doc.text for c in candidates["2"])


# By its content type, or by its bytes: where every byte is a character (Latin-1), or two are (UTF-16)
@pytest.mark.parametrize("fault", ["pdf", "binary", "binary-latin1", "binary-utf16"])
def test_a_page_that_is_not_text_keeps_title_and_snippet_and_is_counted(stub, settings, caplog, fault):
    stub.fail("cache", fault, times=10)
    backend = ChatNoirBackend(settings)
    with caplog.at_level(logging.DEBUG, logger="app.chatnoir"):
        candidates = backend.retrieve(TOPICS[:1], depth=5)["1"]
    pages = stub.count("cache")
    assert pages >= 2 and backend.stats.fallbacks == {"not text": pages} and backend.stats.retries == 0
    assert all(c.doc.text and "\ufffd" not in c.doc.text and "PDF" not in c.doc.text for c in candidates)
    assert (f"{pages} documents use title + snippet, their text could not be fetched or read (not text: {pages})"
            in caplog.text)
    assert not [path for path in settings.cache_dir.rglob("*") if path.is_file()]  # a later run asks again


def _answer(body: bytes, content_type: str) -> requests.Response:
    """A cache answer as `_send` hands it to `cached_text` (which decides its encoding); "" names no Content-Type."""
    response = requests.Response()
    response._content = body
    if content_type:
        response.headers["Content-Type"] = content_type
    return response


@pytest.mark.parametrize("body, content_type, text", [
    (b"Teachers and tenure <p>Tenure protects <b>academic</b> freedom.</p>", "", "Tenure protects academic freedom."),
    (b"x < y and <3 tenure", "", "x < y and <3 tenure"),  # no tag: text
    (b"If a <b and b <c then a <c", "", "If a <b and b <c then a <c"),  # "<b and b " opens no tag
    (b"Plain <p> as written", "text/plain", "Plain <p> as written"),  # a declared text page keeps its signs
])
def test_an_answer_without_a_content_type_is_read_as_a_page_where_it_holds_tags(settings, monkeypatch, body,
                                                                               content_type, text):
    """An answer naming no Content-Type whose text came before its first tag kept its tags as words."""
    from app.chatnoir import ChatNoirClient

    client = ChatNoirClient(replace(settings, page_text="full"), ChatNoirStats())
    response = _answer(body, content_type)
    monkeypatch.setattr(client, "_send", lambda *args, **kwargs: response)
    assert client.cached_text(uuid5(NAMESPACE_URL, "x")).split("\n")[-1] == text


def test_a_page_is_read_up_to_binary_after_its_first_bytes_and_refused_where_none_is_left(settings, monkeypatch):
    """A capture with a binary tail was read as 20,000 characters of U+FFFD and stray letters; a page whose text is
    binary all through (its first bytes a script) is not text (title + snippet), not a text of junk."""
    from app.chatnoir import ChatNoirClient, ChatNoirRequestError

    client = ChatNoirClient(replace(settings, page_text="full"), ChatNoirStats())
    tail = random.Random(13).randbytes(100_000)
    clean = b"<html><body><p>" + b"Tenure protects academic freedom. " * 150 + b"</p><p>"
    response = _answer(clean + tail, "text/html; charset=utf-8")
    monkeypatch.setattr(client, "_send", lambda *args, **kwargs: response)
    text = client.cached_text(uuid5(NAMESPACE_URL, "x"))
    assert text.startswith("Tenure protects academic freedom. " * 149) and len(text) < 150 * 34 + 1000
    assert "\ufffd" not in text
    script = b"<html><head><script>" + b"var a = 1;" * 500 + b"</script></head><body><p>"
    response = _answer(script + tail, "text/html; charset=utf-8")
    with pytest.raises(ChatNoirRequestError, match="undecodable"):
        client.cached_text(uuid5(NAMESPACE_URL, "x"))
    response = _answer(clean + tail, "text/html; charset=iso-8859-1")  # every byte a character, controls too
    text = client.cached_text(uuid5(NAMESPACE_URL, "x"))
    assert text.startswith("Tenure protects academic freedom. " * 149) and len(text) < 150 * 34 + 1000


def test_stub_serves_a_page_fault_only_to_a_page_it_has(stub):
    """Concurrent fetches arrive in any order: a queued PDF must not turn the page the stub lacks into 'not text'."""
    lacking = next(document for document in stub.documents if not document.cached)
    present = next(document for document in stub.documents if document.cached)
    stub.fail("cache", "pdf")

    def fetch(document):
        return requests.get(f"{stub.base_url}/cache", timeout=5,
                            params={"uuid": str(document.uuid), "index": stub.index, "apikey": KEY, "raw": ""})

    assert fetch(lacking).status_code == 404
    answer = fetch(present)
    assert answer.headers["Content-Type"] == "application/pdf" and answer.content == chatnoir_stub.PDF_BYTES
    assert fetch(present).headers["Content-Type"].startswith("text/html")


def test_a_cache_endpoint_failing_for_a_third_of_its_pages_is_given_up_on(settings, monkeypatch):
    """Pages that never answer, among others that do, never made 20 failures in a row: each cost 5 attempts of 30
    s, hours over a run."""
    monkeypatch.setattr("app.chatnoir.MAX_DOCUMENT_FAILURES_IN_A_ROW", 3)
    backend = ChatNoirBackend(settings)
    for failed in (True, False, True, False, False, False, False, False, False, True):  # 3 failures, 7 answers
        backend._failed(failed, 0.1)
        assert not backend._given_up()
    backend._failed(False, 0.1)
    backend._failed(True, 0.1)  # 4 failures, half as many as the 8 answers: failures count after their retries
    assert backend._given_up()


def test_pages_that_hang_are_given_up_on_by_the_time_they_take(settings):
    """A quarter of the pages never answering (fewer than half, counted) held a 5,000-page run's texts 7 hours."""
    backend = ChatNoirBackend(settings)
    for _ in range(2000):  # pages answered in half a second each: 1,000 s of fetching
        backend._failed(False, 0.5)
    for _ in range(30):  # 30 pages that hung for a minute each: 1,800 s, but under 4 times the answered pages'
        backend._failed(True, 60.0)
        backend._failed(False, 0.0)  # among others answering (never 20 failures in a row)
    assert not backend._given_up()
    for _ in range(40):
        backend._failed(True, 60.0)
        backend._failed(False, 0.0)
    assert backend._given_up()  # 4,200 s: over 4 times the 1,000 s the answers took
    quick = ChatNoirBackend(settings)
    for _ in range(9):
        quick._failed(True, 60.0)  # 540 s: the failures' floor (MAX_DOCUMENT_FAILURE_S) not reached
    assert not quick._given_up()
    for _ in range(6):
        quick._failed(True, 60.0)  # 900 s, but of the first 15 pages: a slow start is no trend
    assert not quick._given_up()


@pytest.mark.parametrize("fault, reason", [("hang", "time-out"), ("trickle", "cut answer")])
def test_a_page_that_never_answers_is_asked_twice_not_once_per_retry(stub, settings, fault, reason, caplog):
    """Each page that never answered took every retry (5 x 30 s and backoff by default); one whose body trickled in
    too. The log says the retries it has ("retry 1 of 4" and "after 5 attempts" were said of its 2)."""
    stub.fail("cache", fault, times=2)
    backend = ChatNoirBackend(replace(settings, retries=4, concurrency=1))
    with caplog.at_level(logging.DEBUG, logger="app.chatnoir"):
        candidates = backend.retrieve(TOPICS[:1], depth=5)
    assert backend.stats.fallbacks == {reason: 1}
    assert stub.count("cache") == len(candidates["1"]) + 1
    assert "document request: " in caplog.text and "; retry 1 of 1 in " in caplog.text
    assert "document request failed after 2 attempts" in caplog.text and "of 4" not in caplog.text


def test_a_page_answered_with_errors_says_its_attempts(stub, settings, caplog):
    """A status error is retried `retries` times, and the failure counts the attempts urllib3 made."""
    stub.fail("cache", "500", times=3)
    backend = ChatNoirBackend(replace(settings, retries=2, concurrency=1))
    with caplog.at_level(logging.DEBUG, logger="app.chatnoir"):
        backend.retrieve(TOPICS[:1], depth=5)
    assert backend.stats.fallbacks == {"HTTP 500": 1}
    assert "retry 2 of 2" in caplog.text and "document request failed after 3 attempts: HTTP 500" in caplog.text


@pytest.fixture
def quick_outages(monkeypatch):
    monkeypatch.setattr("app.chatnoir.OUTAGE_PAUSE_S", 0.01)


@pytest.mark.parametrize("in_a_row", [20, 2])  # 2: the page after the second failure is not asked
@pytest.mark.parametrize("outage", ["503", "502"])  # a gateway before ChatNoir, while ChatNoir restarts
def test_pages_an_outage_failed_are_asked_again_once_the_cache_answers(stub, settings, caplog, monkeypatch,
                                                                        quick_outages, in_a_row, outage):
    """ChatNoir restarting while its pages are fetched (30 s) cost 16 of 29 pages their text, and after 20 failures in
    a row every page after them, in a run that went on as if nothing had happened."""
    monkeypatch.setattr("app.chatnoir.MAX_DOCUMENT_FAILURES_IN_A_ROW", in_a_row)
    sound = ChatNoirBackend(replace(settings, cache_dir=None)).retrieve(TOPICS[2:3], depth=5)
    assert len(sound["3"]) == 4
    before = stub.count("cache")
    stub.fail("cache", "pass")  # the first page answers, then the service is out for the others and two more asks
    stub.fail("cache", outage, times=min(3, in_a_row) + 2)
    backend = ChatNoirBackend(replace(settings, retries=0, concurrency=1))
    with caplog.at_level(logging.WARNING, logger="app.chatnoir"):
        candidates = backend.retrieve(TOPICS[2:3], depth=5)
    assert candidates == sound and backend.stats.fallbacks == {}
    # the first page, the others as far as they were asked, the first again 3 times, the other 3 again
    assert stub.count("cache") - before == 1 + min(3, in_a_row) + 3 + 3
    failed = min(3, in_a_row)
    assert caplog.text.count(f"ChatNoir's cache failed {failed} pages as an outage does ({3 - failed} more were not "
                             "asked for the failures): asking for a page it answered before until it is answered") == 1


def test_pages_stay_title_and_snippet_where_chatnoir_never_answers_again(stub, settings, caplog, monkeypatch,
                                                                          quick_outages):
    monkeypatch.setattr("app.chatnoir.MAX_OUTAGE_S", 0.1)
    sound = ChatNoirBackend(replace(settings, cache_dir=None)).retrieve(TOPICS[2:3], depth=5)["3"]
    stub.fail("cache", "pass")
    stub.fail("cache", "503", times=1000)
    backend = ChatNoirBackend(replace(settings, retries=0, concurrency=1))
    with caplog.at_level(logging.WARNING, logger="app.chatnoir"):
        candidates = backend.retrieve(TOPICS[2:3], depth=5)["3"]
    assert backend.stats.fallbacks == {"HTTP 503": 3}  # counted once each
    assert [candidate.doc.text == page.doc.text for candidate, page in zip(candidates, sound)] == [True] + [False] * 3
    assert re.search(r"ChatNoir answered nothing for \d+ s \(ChatNoir document request failed after 1 attempt: "
                     r"HTTP 503\): the 3 pages an outage cost keep title \+ snippet", caplog.text)


def test_pages_an_outage_failed_before_any_answered_are_asked_again_once_a_search_is(stub, settings, quick_outages):
    """ChatNoir restarting during its first pages: no page answered tells it is back, a search does."""
    sound = ChatNoirBackend(replace(settings, cache_dir=None)).retrieve(TOPICS[2:3], depth=5)
    searches = stub.count("search")
    stub.fail("cache", "503", times=4)
    backend = ChatNoirBackend(replace(settings, retries=0, concurrency=1))
    assert backend.retrieve(TOPICS[2:3], depth=5) == sound and backend.stats.fallbacks == {}
    assert stub.count("search") - searches == 2  # the topic's, then one to see ChatNoir answer


def test_an_outages_failures_are_forgotten_the_endpoints_own_are_not(settings, monkeypatch):
    """Pages asked again after an outage get the bounds anew for the outage's failures only: a half-dead endpoint's
    time-outs had their budget renewed (200 requests and 68 s where 96 and 32 s)."""
    monkeypatch.setattr("app.chatnoir.MAX_DOCUMENT_FAILURES_IN_A_ROW", 2)
    backend = ChatNoirBackend(settings)
    for failed, outage in ((True, False), (False, False), (True, True), (True, False)):  # time-outs, an answer, a 503
        backend._failed(failed, 30.0 if failed else 1.0, outage)
    backend._forget_outage_failures()
    assert backend._given_up()  # two time-outs: as many as the bound, and half the answers or more
    restarting = ChatNoirBackend(settings)
    for _ in range(3):
        restarting._failed(True, 1.0, outage=True)
    assert restarting._given_up()
    restarting._forget_outage_failures()
    assert not restarting._given_up()
    in_a_row = ChatNoirBackend(settings)  # 10 answers, then 2 time-outs and a broken connection in a row
    for failed, outage in [(False, False)] * 10 + [(True, False), (True, False), (True, True)]:
        in_a_row._failed(failed, 1.0, outage)
    in_a_row._forget_outage_failures()
    assert in_a_row._given_up()  # the time-outs' row stays


@pytest.mark.parametrize("reason, answered", [("HTTP 404", True), ("not text", True), ("HTTP 429", True),
                                              ("HTTP 503", False), ("unreachable", False), ("time-out", False)])
def test_a_canary_answered_with_an_error_of_its_own_is_an_answer(settings, monkeypatch, reason, answered):
    """The page asked to see ChatNoir back answered 404 or with JSON: ChatNoir is there; asked for 5 minutes, then
    "ChatNoir answered nothing", which was untrue."""
    monkeypatch.setattr("app.chatnoir.MAX_OUTAGE_S", 0.0)
    backend = ChatNoirBackend(settings)
    backend._answered_page = uuid5(NAMESPACE_URL, "a page")

    def cached_text(uuid):
        raise ChatNoirRequestError("failed", reason)

    monkeypatch.setattr(backend.client, "cached_text", cached_text)
    assert backend._answers_again("a query", 1, 0) is answered


def test_a_pages_own_failure_is_not_asked_again(stub, settings, monkeypatch, quick_outages):
    """A 500 (or 504, a time-out) for every page is the endpoint's trouble, not an outage's: no wait, no second
    asking (a half-dead endpoint cost twice its time when it was asked again)."""
    monkeypatch.setattr("app.chatnoir.MAX_OUTAGE_S", 60)
    stub.fail("cache", "500", times=1000)
    backend = ChatNoirBackend(replace(settings, retries=0, concurrency=1))
    started = time.monotonic()
    backend.retrieve(TOPICS[2:3], depth=5)
    assert backend.stats.fallbacks == {"HTTP 500": 4} and stub.count("cache") == 4
    assert time.monotonic() - started < 30


def test_an_answer_quoting_the_key_url_encoded_shows_it_masked(settings):
    """A gateway's page echoing the request's URL put the key, as the URL writes it, into the error and the log."""
    key = "Ab+Cd/Ef=Gh"
    client = ChatNoirClient(replace(settings, api_key=key), ChatNoirStats())
    lowered = quote(key, safe="").replace("%2B", "%2b").replace("%2F", "%2f").replace("%3D", "%3d")
    page = f"400 Bad Request: GET /cache?uuid=x&apikey={quote_plus(key)} or {lowered} or {key}"
    excerpt = client._excerpt(page)
    assert excerpt.count("***") == 3 and "Ab" not in excerpt


def test_a_failing_cache_endpoint_is_given_up_on(stub, settings, monkeypatch):
    monkeypatch.setattr("app.chatnoir.MAX_DOCUMENT_FAILURES_IN_A_ROW", 2)
    stub.fail("cache", "500", times=100)
    backend = ChatNoirBackend(ChatNoirSettings(api_key=KEY, base_url=stub.base_url, retries=0, concurrency=1))
    candidates = backend.retrieve(TOPICS[1:2], depth=5)
    assert stub.count("cache") == 2
    assert backend.stats.fallbacks == {"HTTP 500": 2, "not asked, the cache endpoint kept failing": 3}
    assert all(c.doc.text for c in candidates["2"])


# --- one bad page costs that page alone -----------------------------------------------------------------------

# Every C0 and C1 control character and the XML non-characters, as real ClueWeb pages hold them.
CONTROL_CHARACTERS = [chr(code) for code in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0xFFFE, 0xFFFF]]


def test_pages_holding_any_control_character_keep_their_text(tmp_path):
    documents = [
        chatnoir_stub.StubDocument(
            f"clueweb22-en0009-00-{code:05d}", uuid5(NAMESPACE_URL, f"clueweb22:page-{code}"),
            f"Teacher tenure {character}page", f"https://example.org/{code}",
            f"<html><body><p>Teacher tenure{character}protects academic freedom.</p>{character}</body></html>", True)
        for code, character in ((ord(character), character) for character in CONTROL_CHARACTERS)
    ]
    server = chatnoir_stub.ChatNoirStub(documents, api_key=KEY).start()
    try:
        backend = ChatNoirBackend(ChatNoirSettings(api_key=KEY, base_url=server.base_url, cache_dir=tmp_path))
        candidates = backend.retrieve(TOPICS[:1], depth=len(documents))["1"]
    finally:
        server.stop()
    assert len(candidates) == len(documents) and backend.stats.fallbacks == {}
    assert all("academic freedom" in candidate.doc.text for candidate in candidates)


def test_an_answer_is_read_up_to_a_bound_so_a_gzip_bomb_cannot_fill_the_memory(stub, settings, monkeypatch):
    """A misbehaving service's 10 MB that decode to 10 GB: the body is read, decoded, up to MAX_BODY_BYTES."""
    import app.chatnoir as chatnoir

    monkeypatch.setattr("app.chatnoir.MAX_BODY_BYTES", 256 << 10)
    stub.bomb_bytes = 8 << 20
    document = next(document for document in stub.documents if document.cached)
    stub.fail("cache", "gzip-bomb")
    text = ChatNoirClient(settings, chatnoir.ChatNoirStats()).cached_text(document.uuid)
    assert text.startswith("boom boom") and 100_000 < len(text) <= 256 << 10


def test_a_page_that_cannot_be_read_costs_that_page_alone(stub, settings, monkeypatch):
    unreadable = stub.documents[1].uuid
    fetch = ChatNoirClient.cached_text

    def cached_text(client, uuid):
        if uuid == unreadable:
            raise ValueError("All strings must be XML compatible")
        return fetch(client, uuid)

    monkeypatch.setattr(ChatNoirClient, "cached_text", cached_text)
    backend = ChatNoirBackend(settings)
    candidates = backend.retrieve(TOPICS[:1], depth=5)["1"]
    assert backend.stats.fallbacks == {"unreadable page (ValueError)": 1}
    assert all(candidate.doc.text for candidate in candidates)


# --- the real entrypoint -------------------------------------------------------------------------------------


@pytest.fixture
def chatnoir_input(fixtures, tmp_path):
    input_dir = tmp_path / "in"
    input_dir.mkdir()
    (input_dir / "topics.xml").write_bytes((fixtures / "chatnoir" / "topics.xml").read_bytes())
    (input_dir / CREDENTIALS_FILE).write_text(json.dumps({"apikey": KEY, "index": "clueweb22/b"}))
    return input_dir


def _entrypoint(input_dir: Path, output_dir: Path, base_url: str, *flags: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CHATNOIR_BASE_URL": base_url, "CHATNOIR_RETRIES": "1", "CHATNOIR_TIMEOUT_S": "2",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", str(REPO / "entrypoint.sh"), "-i", str(input_dir), "-o", str(output_dir), *flags],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_run_stopped_while_pages_hang_ends_at_once_without_the_key(stub, chatnoir_input, tmp_path):
    """docker stop sends SIGKILL 10 s after SIGTERM: worker threads inside a page request must not hold the exit
    for their time-outs and retries, nor log the key (urllib3 quotes the URL) after the retrieval is left."""
    stub.hang_s = 60.0
    stub.fail("cache", "hang", times=100)
    env = {**os.environ, "CHATNOIR_BASE_URL": stub.base_url, "CHATNOIR_RETRIES": "2", "CHATNOIR_TIMEOUT_S": "20",
           "TQDM_DISABLE": "1"}
    running = subprocess.Popen([str(Path(sys.executable).parent / "touche"), "run", "-i", str(chatnoir_input), "-o",
                                str(tmp_path / "out"), "--no-metadata", "--debug"], cwd=REPO, env=env,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while stub.count("cache") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    running.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    assert running.wait(timeout=60) == 143
    assert time.monotonic() - stopped < 5.0
    rest = running.stderr.read()
    assert rest.strip().splitlines()[-1] == "touche: terminated"
    assert_key_absent(rest)
    assert not (tmp_path / "out" / "run.txt").exists()


@pytest.mark.slow
def test_entrypoint_ranks_chatnoir_results(stub, chatnoir_input, tmp_path):
    stub.fail("search", "429")
    output = tmp_path / "out"
    result = _entrypoint(chatnoir_input, output, stub.base_url)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split() for line in (output / "run.txt").read_text().splitlines()]
    known = {document.trec_id or str(document.uuid) for document in stub.documents}
    assert {row[0] for row in rows} == {"1", "2", "3"} and {row[2] for row in rows} <= known
    assert stub.count("search") == 4  # one per topic, plus the retried 429
    assert_key_absent(result.stdout, result.stderr)
    assert_key_absent_in_dir(output)


@pytest.mark.slow
def test_entrypoint_retries_a_gateway_page_and_counts_pages_that_are_not_text(stub, chatnoir_input, tmp_path):
    stub.fail("search", "gateway-html")
    stub.fail("cache", "pdf", times=2)
    output = tmp_path / "out"
    result = _entrypoint(chatnoir_input, output, stub.base_url, "--quiet")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HTTP 200 answer that is not JSON (55 bytes); retry 1 of 1" in result.stderr
    assert "could not be fetched or read (not text: 2, HTTP 404: 1)" in result.stderr  # one page the stub lacks
    assert "\ufffd" not in (output / "run.txt").read_text(encoding="utf-8")
    assert_key_absent(result.stdout, result.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["401", "offline"])
def test_entrypoint_fails_clearly_without_a_partial_run(stub, chatnoir_input, tmp_path, fault):
    base_url = f"http://127.0.0.1:{free_port()}/" if fault == "offline" else stub.base_url
    stub.fail("search", "401")
    output = tmp_path / "out"
    result = _entrypoint(chatnoir_input, output, base_url)
    assert result.returncode != 0
    assert not (output / "run.txt").exists() and not (output / "run.txt.gz").exists()
    assert ("rejected the API key" if fault == "401" else "cannot reach") in result.stderr
    assert_key_absent(result.stdout, result.stderr)
    if output.exists():
        assert_key_absent_in_dir(output)


@pytest.mark.parametrize("bulk", [
    "<script>" + "var x = 1;" * 1_200_000 + "</script>",  # 12 MB: the markup was cut at 10 MB before bulk went
    '<div data-props="' + "x" * 15_000_000 + '"></div>',  # a framework's state: no bulk before
])
def test_megabytes_of_bulk_before_a_page_text_are_cut_out_before_the_bound(bulk, monkeypatch):
    client = ChatNoirClient(ChatNoirSettings(api_key=KEY), ChatNoirStats())
    body = f"<html><head><title>T</title></head><body>{bulk}<p>Uniforms lessen peer pressure.</p></body>".encode()
    monkeypatch.setattr(client, "_send", lambda *args, **kwargs: _answer(body, "text/html; charset=utf-8"))
    assert client.cached_text(uuid5(NAMESPACE_URL, "page")) == "Uniforms lessen peer pressure."


@pytest.mark.parametrize("junk", ["QUJD" * 50_000, "&amp;" * 500_000, "https://example.org/?q=" + "x%20" * 300])
def test_runs_without_a_space_go_before_the_text_is_bounded(junk, monkeypatch):
    """200 kB of base64 or half a million &amp; shown before an argument filled the 100,000 characters the stages read,
    and the argument was lost; a 1,000-character link is no word either. Chinese, written without spaces, stays."""
    client = ChatNoirClient(ChatNoirSettings(api_key=KEY), ChatNoirStats())
    chinese = "核能比太阳能更可靠" * 200
    body = f"<html><body><p>{junk}</p><p>Uniforms lessen peer pressure.</p><p>{chinese}</p></body>".encode()
    monkeypatch.setattr(client, "_send", lambda *args, **kwargs: _answer(body, "text/html; charset=utf-8"))
    text = bounded_text(client.cached_text(uuid5(NAMESPACE_URL, "page")))
    assert text == f"Uniforms lessen peer pressure.\n{chinese}"


def test_a_page_text_is_read_past_20000_characters_and_cached_whole(stub, settings):
    """A page's argument after 20,000 characters of main content (87 of 536 dev pages run longer) was read by no
    stage; a page text is read up to MAX_TEXT_CHARS, and its cache file holds it whole."""
    from dataclasses import replace as replaced

    from app.records import MAX_TEXT_CHARS

    long_page = "<html><body><p>" + "Some words of a page. " * 2_000 + "</p><p>The argument at its end.</p>" + (
        "<p>" + "More words. " * 10_000 + "</p></body></html>")
    stub.documents[0] = replaced(stub.documents[0], html=long_page)

    def text() -> str:
        found = ChatNoirBackend(settings).retrieve(TOPICS[:1], depth=5)["1"]
        return next(c.doc.text for c in found if c.doc.doc_id == stub.documents[0].trec_id)

    first = text()
    assert len(first) == MAX_TEXT_CHARS and first.index("The argument at its end.") > 20_000
    fetched = stub.count("cache")
    assert text() == first and stub.count("cache") == fetched  # served from the cache


def test_an_article_after_a_megabyte_and_more_of_menu_links_is_read(monkeypatch):
    """Links are text, no bulk: the page was cut at 1,000,000 characters within them, and read as its menu."""
    client = ChatNoirClient(ChatNoirSettings(api_key=KEY), ChatNoirStats())
    menu = "<nav><ul>" + '<li><a href="/c">Category shop deals</a></li>' * 30_000 + "</ul></nav>"  # 1.4 MB
    body = f"<html><head><title>T</title></head><body>{menu}<p>Uniforms lessen peer pressure.</p></body>".encode()
    monkeypatch.setattr(client, "_send", lambda *args, **kwargs: _answer(body, "text/html; charset=utf-8"))
    assert client.cached_text(uuid5(NAMESPACE_URL, "page")) == "Uniforms lessen peer pressure."


def test_a_result_repeated_across_pages_of_results_costs_the_topic_no_depth(settings, monkeypatch):
    """Cut to the depth before duplicates went, a topic kept 4 documents where 5 distinct were answered."""
    backend = ChatNoirBackend(settings)
    results = [{"trec_id": f"clueweb12-0000wb-00-0000{n}", "uuid": str(uuid5(NAMESPACE_URL, str(n))),
                "score": 10.0 - n, "title": "t", "snippet": "s"} for n in (1, 2, 2, 3, 1, 4, 5, 6)]
    monkeypatch.setattr(backend.client, "search", lambda query, size: results)
    hits = backend._search(TOPICS[0], 5)
    assert [hit.doc_id[-1] for hit in hits] == ["1", "2", "3", "4", "5"]


def test_pages_are_read_in_parsing_threads_whatever_the_fetching_concurrency(stub, settings, monkeypatch):
    """8 fetching threads parsed 8 pages of 4.8 MB at once: 5.4 GB (each thread's malloc arena kept its page's
    trees); read in PARSING_THREADS threads, 0.98 GB."""
    import threading

    from app import chatnoir

    readers, read_page = set(), chatnoir.read_page

    def reading(*args, **kwargs):
        readers.add(threading.current_thread().name)
        return read_page(*args, **kwargs)

    monkeypatch.setattr(chatnoir, "read_page", reading)
    candidates = ChatNoirBackend(replace(settings, concurrency=8)).retrieve(TOPICS, depth=5)
    assert sum(map(len, candidates.values())) > 5 and readers
    assert len(readers) <= chatnoir.PARSING_THREADS and all(name.startswith("chatnoir-read") for name in readers)


def test_a_result_repeated_on_a_later_page_of_a_capped_answer_costs_no_depth(settings, monkeypatch):
    """A service answering 3 a page whose second page repeats a result of the first: the client asked for depth
    results in all, duplicates counted, and the topic kept depth - 1 (a review)."""
    backend = ChatNoirBackend(settings)
    ranking = [1, 2, 3, 2, 4, 5, 6, 7]
    raw = {n: {"trec_id": f"clueweb12-0000wb-00-0000{n}", "uuid": str(uuid5(NAMESPACE_URL, str(n))),
               "score": 10.0 - n, "title": "t", "snippet": "s"} for n in ranking}
    monkeypatch.setattr(backend.client, "_page",
                        lambda query, start, size: ([raw[n] for n in ranking[start:start + min(size, 3)]], 100))
    assert [hit.doc_id[-1] for hit in backend._search(TOPICS[0], 5)] == ["1", "2", "3", "4", "5"]


def test_a_later_page_repeating_the_first_without_a_total_keeps_the_first(settings, monkeypatch, caplog):
    """The later page's missing total replaced the first's, and the warning's min(size, None) ended the run in a
    TypeError (a review); a result padded or named by trec_id alone on a later page is the same result."""
    client = ChatNoirClient(settings, ChatNoirStats())
    first = [{"trec_id": f"clueweb12-0000wb-00-0000{n}", "uuid": str(uuid5(NAMESPACE_URL, str(n)))} for n in range(3)]
    answers = iter([(first, 100), (first, None)])
    monkeypatch.setattr(client, "_page", lambda query, start, size: next(answers))
    assert client.search("q", 5) == first and "its next page repeats them" in caplog.text
    padded = [{"trec_id": item["trec_id"] + "\n"} for item in first]
    answers = iter([(first, 100), (padded, 100)])
    assert client.search("q", 5) == first
